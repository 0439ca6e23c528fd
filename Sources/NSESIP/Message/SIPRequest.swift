/// A SIP request: method, Request-URI, headers and body.
public struct SIPRequest: Sendable, Hashable {
    /// The method token, e.g. `REGISTER`.
    public var method: String
    /// The Request-URI.
    public var uri: SIPURI
    /// The header fields in order.
    public var headers: SIPHeaders
    /// The body bytes (may be decrypted plaintext: never log it).
    public var body: [UInt8]

    /// Creates a request.
    public init(method: String, uri: SIPURI, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }

    /// Builds a response to this request copying Via, From, To, Call-ID and CSeq (RFC 3261 §8.2.6.2).
    public func makeResponse(statusCode: Int, reasonPhrase: String? = nil, toTag: String? = nil) -> SIPResponse {
        var h = SIPHeaders()
        for v in headers.values("Via") { h.add("Via", v) }
        if let from = headers["From"] { h.add("From", from) }
        if var to = headers["To"] {
            if let toTag, var addr = try? SIPNameAddress(parsing: to), addr.tag == nil {
                addr.tag = toTag
                to = addr.description
            }
            h.add("To", to)
        }
        if let callID = headers["Call-ID"] { h.add("Call-ID", callID) }
        if let cseq = headers["CSeq"] { h.add("CSeq", cseq) }
        return SIPResponse(
            statusCode: statusCode, reasonPhrase: reasonPhrase ?? SIPResponse.defaultReason(statusCode), headers: h)
    }
}
