import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A stored file opened for reading: its descriptor (closed when the last reference goes, also when the answer that
/// would have read it is dropped unsent), its size and the SHA-256 recorded when it was uploaded.
final class StoredBlob: Sendable {
    let id: String
    let size: Int
    /// Lowercase hex.
    let sha256: String
    private let fd: Int32

    init(id: String, fd: Int32, size: Int, sha256: String) {
        self.id = id
        self.fd = fd
        self.size = size
        self.sha256 = sha256
    }

    deinit { close(fd) }

    /// Up to `count` bytes from `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        try FileSystem.readBytes(fd: fd, at: offset, count: count)
    }
}
