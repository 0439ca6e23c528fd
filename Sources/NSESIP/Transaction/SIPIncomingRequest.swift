/// A request received by the transaction layer that needs an answer.
public struct SIPIncomingRequest: Sendable {
    /// The received request.
    public var request: SIPRequest
    /// The server transaction key used to absorb retransmissions.
    public var transactionKey: String
}
