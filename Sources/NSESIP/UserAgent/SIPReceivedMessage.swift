/// A MESSAGE received from the network.
public struct SIPReceivedMessage: Sendable {
    /// The Call-ID.
    public var callID: String
    /// The From address.
    public var from: SIPNameAddress?
    /// The To address.
    public var to: SIPNameAddress?
    /// All headers.
    public var headers: SIPHeaders
    /// The Content-Type, if any.
    public var contentType: String?
    /// The body bytes (may be ciphertext or plaintext: never log it).
    public var body: [UInt8]
    /// The full request.
    public var request: SIPRequest
}
