/// The outcome of sending a MESSAGE.
public struct SIPSendResult: Sendable {
    /// The final status code.
    public var statusCode: Int
    /// The final reason phrase.
    public var reasonPhrase: String
    /// The Call-ID used.
    public var callID: String
    /// Number of requests sent (1 plus authenticated retries).
    public var requestCount: Int
    /// Time from the first send to the final response.
    public var elapsed: Duration
    /// The final response.
    public var response: SIPResponse
}
