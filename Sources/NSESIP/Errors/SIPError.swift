/// An error raised by the NSESIP library.
public struct SIPError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The category of a SIP error.
    public enum Code: String, Sendable, Hashable {
        /// Input that does not follow SIP syntax.
        case malformedMessage
        /// A message, header section or body above the configured limits.
        case messageTooLarge
        /// A socket, connection or TLS failure.
        case transport
        /// A transaction that got no final response in time (Timer F).
        case timeout
        /// Credentials missing or rejected after the allowed number of challenges.
        case authenticationFailed
        /// A response that does not fit the transaction or request.
        case unexpectedResponse
        /// An argument that cannot be used (bad URI, bad option).
        case invalidArgument
        /// The user agent or transport is already closed.
        case closed
    }

    /// The category of the error.
    public var code: Code
    /// A one-line description naming the problem (never contains message bodies).
    public var description: String

    /// Creates an error with a code and a one-line description.
    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    static func malformed(_ text: String) -> SIPError { SIPError(.malformedMessage, text) }
    static func tooLarge(_ text: String) -> SIPError { SIPError(.messageTooLarge, text) }
}
