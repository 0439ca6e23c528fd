#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An operating-system call that failed, with the operation and the path it was about.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    /// The `errno` value the call left.
    public var errnoCode: Int32
    /// What was being done, e.g. "open".
    public var operation: String
    /// The file the operation was about, if any.
    public var path: String?

    public init(errnoCode: Int32, operation: String, path: String? = nil) {
        self.errnoCode = errnoCode
        self.operation = operation
        self.path = path
    }

    /// Captures the current `errno`.
    public static func current(_ operation: String, path: String? = nil) -> SystemError {
        SystemError(errnoCode: errno, operation: operation, path: path)
    }

    public var description: String {
        let reason = String(cString: strerror(errnoCode))
        if let path { return "\(operation) \(path): \(reason)" }
        return "\(operation): \(reason)"
    }
}
