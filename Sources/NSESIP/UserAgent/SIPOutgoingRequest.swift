/// An out-of-dialog request other than REGISTER, MESSAGE and INVITE, for the user agent's generic client
/// transaction (``SIPUserAgent/send(_:)``): a SUBSCRIBE (RFC 6665), a REFER (RFC 3515).
public struct SIPOutgoingRequest: Sendable {
    /// The method (`SUBSCRIBE`, `REFER`).
    public var method: String
    /// The target (Request-URI and To).
    public var to: SIPURI
    /// The sender (From).
    public var from: SIPURI
    /// The outbound proxy URI with transport.
    public var proxy: SIPURI
    /// Extra headers (`Event`, `Expires`, `Refer-To`…).
    public var extraHeaders: SIPHeaders
    /// The body and its Content-Type (none by default).
    public var contentType: String?
    public var body: [UInt8]
    /// A fixed Call-ID (random when nil).
    public var callID: String?
    /// Authentication user name (defaults to the From user).
    public var username: String?
    /// Password for digest challenges.
    public var password: String?

    /// Creates a request description.
    public init(
        method: String, to: SIPURI, from: SIPURI, proxy: SIPURI, extraHeaders: SIPHeaders = SIPHeaders(),
        contentType: String? = nil, body: [UInt8] = [], callID: String? = nil, username: String? = nil,
        password: String? = nil
    ) {
        self.method = method
        self.to = to
        self.from = from
        self.proxy = proxy
        self.extraHeaders = extraHeaders
        self.contentType = contentType
        self.body = body
        self.callID = callID
        self.username = username
        self.password = password
    }
}
