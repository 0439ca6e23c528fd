import Glibc

/// An I/O failure of the server's own files (database directory, users file, certificates).
public struct SIPServerError: Error, Sendable, CustomStringConvertible {
    /// A one-line description (never contains message bodies).
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// Small POSIX file helpers (no Foundation in this module).
enum FileSystem {
    static func errnoText() -> String {
        let code = errno
        if let s = strerror(code) { return String(cString: s) + " (errno \(code))" }
        return "errno \(code)"
    }

    static func readFile(_ path: String, maxBytes: Int = 4 << 20) throws(SIPServerError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SIPServerError("cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SIPServerError("cannot read \(path): \(errnoText())")
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
            guard out.count <= maxBytes else { throw SIPServerError("\(path) is larger than \(maxBytes) bytes") }
        }
        return out
    }

    /// Writes `bytes` to `directory/name` durably: temp file, fsync, rename, fsync of the directory.
    static func writeAtomically(directory: String, name: String, bytes: [UInt8]) throws(SIPServerError) {
        let final = directory + "/" + name
        let temp = directory + "/." + name + ".tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SIPServerError("cannot create \(temp): \(errnoText())") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                let text = errnoText()
                close(fd)
                unlink(temp)
                throw SIPServerError("cannot write \(temp): \(text)")
            }
            offset += n
        }
        if fsync(fd) != 0 {
            let text = errnoText()
            close(fd)
            unlink(temp)
            throw SIPServerError("cannot fsync \(temp): \(text)")
        }
        close(fd)
        guard rename(temp, final) == 0 else {
            let text = errnoText()
            unlink(temp)
            throw SIPServerError("cannot rename \(temp): \(text)")
        }
        syncDirectory(directory)
    }

    static func syncDirectory(_ directory: String) {
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    static func remove(_ path: String) {
        _ = unlink(path)
    }

    static func makeDirectory(_ path: String) throws(SIPServerError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw SIPServerError("\(path) exists and is not a directory") }
            return
        }
        // Create parents first.
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex {
            let parent = String(path[path.startIndex..<slash])
            if !parent.isEmpty { try makeDirectory(parent) }
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw SIPServerError("cannot create directory \(path): \(errnoText())")
        }
    }

    static func listDirectory(_ path: String) throws(SIPServerError) -> [String] {
        guard let dir = opendir(path) else { throw SIPServerError("cannot open directory \(path): \(errnoText())") }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { ptr in
                ptr.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// Wall-clock helpers.
enum WallClock {
    /// Seconds since the Unix epoch.
    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec)
    }

    /// Nanoseconds since the Unix epoch.
    static func nowNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// `YYYY-MM-DD HH:MM:SS` in UTC.
    static func utcString(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2)) "
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
    }
}

/// Random identifiers from the system generator.
enum RandomID {
    static func hex(bytes count: Int) -> String {
        var g = SystemRandomNumberGenerator()
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for _ in 0..<count {
            let b = UInt8.random(in: 0...255, using: &g)
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
