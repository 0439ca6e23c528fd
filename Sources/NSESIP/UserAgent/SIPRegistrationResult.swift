/// The outcome of a REGISTER transaction.
public struct SIPRegistrationResult: Sendable {
    /// The final status code (200 on success).
    public var statusCode: Int
    /// The final reason phrase.
    public var reasonPhrase: String
    /// The expiry granted (our Contact's `expires`, else the Expires header), if any.
    public var expires: Int?
    /// Number of REGISTER requests sent (1 plus authenticated retries).
    public var requestCount: Int
    /// Time from the first send to the final response.
    public var elapsed: Duration
    /// The Call-ID used.
    public var callID: String
    /// The Contact that was registered.
    public var contact: SIPNameAddress
    /// The final response.
    public var response: SIPResponse
    /// Our address as seen by the server (Via `received`), if it reported one.
    public var observedHost: String?
    /// Our port as seen by the server (Via `rport`, RFC 3581), if it reported one.
    public var observedPort: Int?
}
