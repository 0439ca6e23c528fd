import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An advisory lock on a file of the container's `locks/` folder, held while `body` runs: processes, and threads of
/// one process, exclude each other (one open file description per call).
enum DeviceFileLock {
    static func withLock<T>(_ lockPath: String, _ body: () throws(DeviceError) -> T) throws(DeviceError) -> T {
        do { try FileSystem.createDirectory(Path.dirname(lockPath), mode: 0o755) } catch {
            throw DeviceError(.io, error.description)
        }
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DeviceError(.io, SystemError.current("open", path: lockPath).description)
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw DeviceError(.io, SystemError.current("flock", path: lockPath).description)
            }
        }
        return try body()
    }
}
