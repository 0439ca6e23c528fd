#if canImport(Glibc)
    public import Glibc
#elseif canImport(Musl)
    public import Musl
#endif

/// Small POSIX file helpers: the per-notification process links no Foundation, so these stand in for it.
public enum FileSystem {
    /// Reads a whole file descriptor, failing once more than `limit` bytes arrive.
    /// - Returns: the bytes, or `nil` when the input is longer than `limit`.
    public static func readAll(fd: Int32, limit: Int) throws(SystemError) -> [UInt8]? {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("read")
            }
            if count == 0 { return result }
            if result.count + count > limit { return nil }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Up to `count` bytes of the open file `fd` from `offset` (`pread`, retried on EINTR); fewer only at its end.
    public static func readBytes(fd: Int32, at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw SystemError.current("pread")
            }
            if got == 0 { break }
            filled += got
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    /// Reads a whole file; `nil` when it is longer than `limit` bytes.
    public static func readFile(_ path: String, limit: Int = 16 * 1024 * 1024) throws(SystemError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw SystemError.current("open", path: path) }
        defer { close(fd) }
        do {
            return try readAll(fd: fd, limit: limit)
        } catch {
            throw SystemError(errnoCode: error.errnoCode, operation: "read", path: path)
        }
    }

    /// Reads a whole UTF-8 text file (invalid sequences are repaired).
    public static func readText(_ path: String, limit: Int = 16 * 1024 * 1024) throws(SystemError) -> String? {
        guard let bytes = try readFile(path, limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `bytes` to `path` through a temporary file and a rename, so readers never see a partial file.
    /// The file is fsynced before the rename and its directory after it (best effort), so the new contents
    /// survive a crash once this returns.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws(SystemError) {
        let temporary = "\(path).tmp.\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        if fd < 0 { throw SystemError.current("create", path: temporary) }
        var failure: SystemError?
        if fchmod(fd, mode) != 0 { failure = SystemError.current("chmod", path: temporary) }
        if failure == nil { failure = writeFully(fd: fd, bytes, path: temporary) }
        if failure == nil, fsync(fd) != 0 { failure = SystemError.current("fsync", path: temporary) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = SystemError.current("rename", path: path) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        // Some file systems refuse fsync on a directory; the rename itself has succeeded either way.
        try? syncDirectory(Path.dirname(path))
    }

    /// Flushes a directory's entries (creations, renames, removals in it) to stable storage.
    public static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw SystemError.current("open", path: path) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw SystemError.current("fsync", path: path) }
    }

    /// Writes a string atomically.
    public static func writeAtomically(_ path: String, _ text: String, mode: mode_t = 0o644) throws(SystemError) {
        try writeAtomically(path, Array(text.utf8), mode: mode)
    }

    /// Appends one record to a file opened with `O_APPEND` (a single `write`, so concurrent appenders don't interleave).
    public static func append(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws(SystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode)
        if fd < 0 { throw SystemError.current("open", path: path) }
        defer { close(fd) }
        if let failure = writeFully(fd: fd, bytes, path: path) { throw failure }
    }

    /// Writes every byte to `fd`, retrying short writes and `EINTR`.
    @discardableResult
    public static func writeFully(fd: Int32, _ bytes: [UInt8], path: String? = nil) -> SystemError? {
        bytes.withUnsafeBytes { writeFully(fd: fd, $0, path: path) }
    }

    /// ``writeFully(fd:_:path:)`` of bytes in memory the caller holds (a decrypted chunk, never copied).
    @discardableResult
    public static func writeFully(fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String? = nil) -> SystemError? {
        var offset = 0
        while offset < bytes.count {
            let count = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return SystemError.current("write", path: path)
            }
            offset += count
        }
        return nil
    }

    /// Creates a directory and its missing parents (with `parentMode`); an existing directory is fine, anything
    /// else already at `path` is an error (`ENOTDIR`).
    public static func createDirectory(_ path: String, mode: mode_t = 0o755, parentMode: mode_t = 0o755)
        throws(SystemError)
    {
        if isDirectory(path) { return }
        let parent = Path.dirname(path)
        if parent != path, !parent.isEmpty, !isDirectory(parent) {
            try createDirectory(parent, mode: parentMode, parentMode: parentMode)
        }
        if mkdir(path, mode) != 0 {
            guard errno == EEXIST else { throw SystemError.current("mkdir", path: path) }
            guard isDirectory(path) else { throw SystemError(errnoCode: ENOTDIR, operation: "mkdir", path: path) }
            return
        }
        if chmod(path, mode) != 0 { throw SystemError.current("chmod", path: path) }
    }

    /// Whether anything exists at `path`.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` is a directory.
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// What identifies one state of a file: its inode, size, and the times of its last write and last change of
    /// any kind (a chmod or chown changes the latter only). A file replaced (renamed over), rewritten in place or
    /// touched has another stamp; only two writes of the same size to the same inode within one timestamp tick
    /// (the kernel's clock tick, a few ms) could leave it alone.
    public struct Stamp: Hashable, Sendable {
        public let inode: UInt64
        public let size: Int64
        public let modified: Int64
        public let changed: Int64
    }

    /// The stamp of `path` now, or `nil` if it does not exist.
    public static func stamp(_ path: String) -> Stamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Stamp(
            inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
    }

    /// The permission bits of `path`.
    public static func permissions(_ path: String) throws(SystemError) -> mode_t {
        var info = stat()
        if stat(path, &info) != 0 { throw SystemError.current("stat", path: path) }
        return info.st_mode & 0o7777
    }

    /// Sets the permission bits of `path`.
    public static func setPermissions(_ path: String, _ mode: mode_t) throws(SystemError) {
        if chmod(path, mode) != 0 { throw SystemError.current("chmod", path: path) }
    }

    /// The names in a directory, sorted, without `.` and `..`.
    public static func contents(ofDirectory path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else { throw SystemError.current("opendir", path: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes a file (not a directory); a missing file is fine.
    public static func remove(_ path: String) throws(SystemError) {
        if unlink(path) != 0, errno != ENOENT { throw SystemError.current("unlink", path: path) }
    }

    /// Removes a folder and everything in it, without following symbolic links (a link is removed, not what it
    /// points to); a missing path is fine.
    public static func removeTree(_ path: String) throws(SystemError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw SystemError.current("lstat", path: path)
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return try remove(path) }
        for name in try contents(ofDirectory: path) { try removeTree(Path.join(path, name)) }
        if rmdir(path) != 0, errno != ENOENT { throw SystemError.current("rmdir", path: path) }
    }

    /// The absolute form of `path`, resolved against the working directory (no symlink resolution).
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return Path.normalize(path) }
        return Path.normalize(Path.join(currentDirectory(), path))
    }

    /// The process's working directory.
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The path of the running executable (`/proc/self/exe`).
    public static func executablePath() -> String? {
        readLink("/proc/self/exe")
    }

    /// `path` with every symbolic link and `.`/`..` resolved (realpath(3)), or `nil` if it does not exist.
    public static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Where the symbolic link at `path` points, or `nil` if it is not one (or cannot be read).
    public static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        buffer[count] = 0
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Whether `path` is a regular file the process may execute.
    public static func isExecutable(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }
}
