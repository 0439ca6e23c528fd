/// A cryptographic operation that could not be done. Descriptions never contain key bytes or plaintext.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable {
        case unavailable, invalidKey
    }

    public var code: Code
    public var description: String

    public init(code: Code, description: String) {
        self.code = code
        self.description = description
    }
}
