/// An out-of-dialog MESSAGE to send (RFC 3428).
public struct SIPOutgoingMessage: Sendable {
    /// The recipient (Request-URI and To).
    public var to: SIPURI
    /// The sender (From).
    public var from: SIPURI
    /// The outbound proxy URI with transport.
    public var proxy: SIPURI
    /// The Content-Type of the body.
    public var contentType: String
    /// The body bytes.
    public var body: [UInt8]
    /// Extra headers (e.g. IMDN headers).
    public var extraHeaders: SIPHeaders
    /// A fixed Call-ID (random when nil).
    public var callID: String?
    /// Authentication user name (defaults to the From user).
    public var username: String?
    /// Password for digest challenges.
    public var password: String?

    /// Creates a MESSAGE description.
    public init(
        to: SIPURI, from: SIPURI, proxy: SIPURI, contentType: String = "text/plain", body: [UInt8],
        extraHeaders: SIPHeaders = SIPHeaders(), callID: String? = nil, username: String? = nil, password: String? = nil
    ) {
        self.to = to
        self.from = from
        self.proxy = proxy
        self.contentType = contentType
        self.body = body
        self.extraHeaders = extraHeaders
        self.callID = callID
        self.username = username
        self.password = password
    }
}
