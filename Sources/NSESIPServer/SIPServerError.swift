/// An I/O failure of the server's own files (database directory, users file, certificates).
public struct SIPServerError: Error, Sendable, CustomStringConvertible {
    /// A one-line description (never contains message bodies).
    public var description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}
