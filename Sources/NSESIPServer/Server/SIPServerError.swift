/// A failure of the server's own files or settings (database, users file, certificates, listeners).
public struct SIPServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem, so a command line can pick its exit status.
    public enum Code: Sendable, Equatable {
        /// Reading, writing or binding failed (disk full, read-only, port in use).
        case io
        /// A file the server was given cannot be used as it is (a corrupt database, one from a newer nse).
        case configuration
    }

    /// What kind of problem.
    public var code: Code
    /// A one-line description (never contains message bodies or header values).
    public var description: String

    /// Creates an error.
    public init(_ description: String, code: Code = .io) {
        self.code = code
        self.description = description
    }
}
