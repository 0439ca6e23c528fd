import Glibc

enum ProcessInfoLite {
    static var pid: Int32 { getpid() }
}

enum TestFiles {
    struct WriteError: Error {}

    static func write(_ path: String, _ text: String) throws {
        guard let f = fopen(path, "w") else { throw WriteError() }
        defer { fclose(f) }
        let bytes = Array(text.utf8)
        guard fwrite(bytes, 1, bytes.count, f) == bytes.count else { throw WriteError() }
    }
}
