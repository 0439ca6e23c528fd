/// A call to place: an INVITE (RFC 3261 §13.2) with its session description.
public struct SIPOutgoingCall: Sendable {
    /// The callee (Request-URI and To).
    public var to: SIPURI
    /// The caller (From).
    public var from: SIPURI
    /// The caller's display name in From (what the callee's phone shows).
    public var displayName: String?
    /// The outbound proxy URI with transport.
    public var proxy: SIPURI
    /// The Content-Type of the body (`application/sdp`, or `multipart/mixed` carrying a sealed offer beside it); nil
    /// for an INVITE without a body (a chat room's subject change).
    public var contentType: String?
    /// The body: the session offer.
    public var body: [UInt8]
    /// Extra headers.
    public var extraHeaders: SIPHeaders
    /// A fixed Call-ID (random when nil).
    public var callID: String?
    /// Authentication user name (defaults to the From user).
    public var username: String?
    /// Password for digest challenges.
    public var password: String?

    /// Creates a call description.
    public init(
        to: SIPURI, from: SIPURI, proxy: SIPURI, contentType: String? = "application/sdp", body: [UInt8],
        extraHeaders: SIPHeaders = SIPHeaders(), callID: String? = nil, username: String? = nil,
        password: String? = nil,
        displayName: String? = nil
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
        self.displayName = displayName
    }
}
