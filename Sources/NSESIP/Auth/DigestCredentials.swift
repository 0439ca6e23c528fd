import NSECrypto
import NSESystem

/// The Digest credentials of an `Authorization` / `Proxy-Authorization` header.
public struct DigestCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The user name.
    public var username: String
    /// The realm from the challenge.
    public var realm: String
    /// The nonce from the challenge.
    public var nonce: String
    /// The digest-uri (the Request-URI as sent).
    public var uri: String
    /// The computed response hash.
    public var response: String
    /// The algorithm; nil when the header omitted it (means MD5).
    public var algorithm: DigestAlgorithm?
    /// The client nonce (with qop).
    public var cnonce: String?
    /// The nonce count as 8 hex digits (with qop).
    public var nonceCount: String?
    /// The chosen qop (`auth`), nil for the RFC 2069 form.
    public var qop: String?
    /// The opaque value echoed from the challenge.
    public var opaque: String?

    /// Creates credentials from their parts.
    public init(
        username: String, realm: String, nonce: String, uri: String, response: String,
        algorithm: DigestAlgorithm? = nil, cnonce: String? = nil, nonceCount: String? = nil,
        qop: String? = nil, opaque: String? = nil
    ) {
        self.username = username
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.response = response
        self.algorithm = algorithm
        self.cnonce = cnonce
        self.nonceCount = nonceCount
        self.qop = qop
        self.opaque = opaque
    }

    /// Computes credentials answering a challenge (qop=auth when offered, otherwise the RFC 2069 form).
    public static func answer(
        _ challenge: DigestChallenge, username: String, password: String, method: String,
        uri: String, cnonce: String = SIPIdentifiers.cnonce(), nonceCount: UInt32 = 1
    ) -> DigestCredentials {
        let useQop = challenge.qopOptions.contains("auth")
        let nc = useQop ? hex8(nonceCount) : nil
        let cn = useQop || challenge.algorithm.isSession ? cnonce : nil
        let response = challenge.algorithm.response(
            username: username, realm: challenge.realm, password: password,
            nonce: challenge.nonce, method: method, uri: uri,
            qop: useQop ? "auth" : nil, cnonce: cn, nonceCount: nc)
        return DigestCredentials(
            username: username, realm: challenge.realm, nonce: challenge.nonce, uri: uri,
            response: response, algorithm: challenge.algorithm, cnonce: cn, nonceCount: nc,
            qop: useQop ? "auth" : nil, opaque: challenge.opaque)
    }

    /// Parses a header value such as `Digest username="bob", realm="x", ...`.
    public init(parsing text: String) throws(SIPError) {
        let (scheme, rest) = try AuthParams.splitScheme(text)
        guard SIPSyntax.equalsIgnoringCase(scheme, "Digest") else {
            throw .malformed("unsupported authorization scheme")
        }
        let p = try AuthParams.parse(rest)
        guard let username = p.value(of: "username"), let realm = p.value(of: "realm"),
            let nonce = p.value(of: "nonce"),
            let uri = p.value(of: "uri"), let response = p.value(of: "response")
        else {
            throw .malformed("authorization missing a required parameter")
        }
        self.username = username
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.response = response
        if let alg = p.value(of: "algorithm") {
            guard let a = DigestAlgorithm(token: alg) else { throw .malformed("unsupported digest algorithm") }
            algorithm = a
        } else {
            algorithm = nil
        }
        cnonce = p.value(of: "cnonce")
        nonceCount = p.value(of: "nc")
        qop = p.value(of: "qop").map { ASCII.lowercased($0) }
        opaque = p.value(of: "opaque")
    }

    /// Checks the response against a password (server side); constant-time comparison.
    public func verify(password: String, method: String) -> Bool {
        let alg = algorithm ?? .md5
        let expected = alg.response(
            username: username, realm: realm, password: password, nonce: nonce,
            method: method, uri: uri, qop: qop, cnonce: cnonce, nonceCount: nonceCount)
        let a = Array(expected.utf8)
        let b = Array(ASCII.lowercased(response).utf8)
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }

    /// The header value form.
    public var description: String {
        var s =
            "Digest username=\(SIPSyntax.quote(username)), realm=\(SIPSyntax.quote(realm)), nonce=\(SIPSyntax.quote(nonce)), uri=\(SIPSyntax.quote(uri)), response=\(SIPSyntax.quote(response))"
        if let algorithm { s += ", algorithm=\(algorithm.rawValue)" }
        if let cnonce { s += ", cnonce=\(SIPSyntax.quote(cnonce))" }
        if let opaque { s += ", opaque=\(SIPSyntax.quote(opaque))" }
        if let qop { s += ", qop=\(qop)" }
        if let nonceCount { s += ", nc=\(nonceCount)" }
        return s
    }

    static func hex8(_ n: UInt32) -> String {
        let h = Hex.encode([UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
        return h
    }
}
