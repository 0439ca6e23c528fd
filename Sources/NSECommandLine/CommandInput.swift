import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What a command is given to read: standard input for `nil` or `-`, else the file, with a size cap.
public enum CommandInput {
    /// Why the input could not be read: the exit status it calls for (66 missing, 74 unreadable) and a one-line
    /// message naming the file.
    public struct Failure: Error, Sendable {
        public var status: ExitStatus
        public var message: String
    }

    /// The bytes, or `nil` when there are more than `limit`.
    public static func read(_ path: String?, limit: Int) throws(Failure) -> [UInt8]? {
        do {
            guard let path, path != "-" else { return try FileSystem.readAll(fd: 0, limit: limit) }
            guard FileSystem.exists(path) else { throw Failure(status: .noInput, message: "\(path): no such file") }
            return try FileSystem.readFile(path, limit: limit)
        } catch let error as Failure {
            throw error
        } catch let error as SystemError {
            throw Failure(status: error.errnoCode == ENOENT ? .noInput : .ioError, message: error.description)
        } catch {
            throw Failure(status: .ioError, message: "\(error)")
        }
    }
}
