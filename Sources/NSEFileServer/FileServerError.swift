/// Why `nse files` could not start or went on no longer: one line, naming the option or address at fault.
public struct FileServerError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable {
        /// The storage folder cannot be made or written.
        case storage
        /// The TLS certificate or key cannot be read.
        case tls
        /// The listener cannot be bound.
        case listen
    }

    public var code: Code
    public var description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
