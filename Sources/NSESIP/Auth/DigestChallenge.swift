import NSECrypto
import NSESystem

/// A `WWW-Authenticate` / `Proxy-Authenticate` Digest challenge.
public struct DigestChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The protection realm.
    public var realm: String
    /// The server nonce.
    public var nonce: String
    /// The opaque value to echo back, if any.
    public var opaque: String?
    /// The hash algorithm (MD5 when absent).
    public var algorithm: DigestAlgorithm
    /// The offered qop values (e.g. `["auth"]`), empty for RFC 2069 style.
    public var qopOptions: [String]
    /// True when the previous credentials failed only because the nonce was stale.
    public var stale: Bool

    /// Creates a challenge.
    public init(
        realm: String, nonce: String, opaque: String? = nil, algorithm: DigestAlgorithm = .md5,
        qopOptions: [String] = ["auth"], stale: Bool = false
    ) {
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque
        self.algorithm = algorithm
        self.qopOptions = qopOptions
        self.stale = stale
    }

    /// Parses a header value such as `Digest realm="x", nonce="y", qop="auth", algorithm=SHA-256`.
    public init(parsing text: String) throws(SIPError) {
        let (scheme, rest) = try AuthParams.splitScheme(text)
        guard SIPSyntax.equalsIgnoringCase(scheme, "Digest") else {
            throw SIPError(.authenticationFailed, "unsupported authentication scheme")
        }
        let params = try AuthParams.parse(rest)
        guard let realm = params.value(of: "realm") else { throw .malformed("challenge without realm") }
        guard let nonce = params.value(of: "nonce") else { throw .malformed("challenge without nonce") }
        self.realm = realm
        self.nonce = nonce
        self.opaque = params.value(of: "opaque")
        if let alg = params.value(of: "algorithm") {
            guard let a = DigestAlgorithm(token: alg) else {
                throw SIPError(.authenticationFailed, "unsupported digest algorithm")
            }
            algorithm = a
        } else {
            algorithm = .md5
        }
        qopOptions = (params.value(of: "qop") ?? "").split(separator: ",").map {
            ASCII.lowercased(SIPSyntax.trim($0))
        }.filter { !$0.isEmpty }
        stale = SIPSyntax.equalsIgnoringCase(params.value(of: "stale") ?? "", "true")
    }

    /// The header value form.
    public var description: String {
        var s = "Digest realm=\(SIPSyntax.quote(realm)), nonce=\(SIPSyntax.quote(nonce))"
        if let opaque { s += ", opaque=\(SIPSyntax.quote(opaque))" }
        s += ", algorithm=\(algorithm.rawValue)"
        if !qopOptions.isEmpty { s += ", qop=\(SIPSyntax.quote(qopOptions.joined(separator: ",")))" }
        if stale { s += ", stale=TRUE" }
        return s
    }

    /// Creates a fresh challenge with a random nonce (server side).
    public static func make(
        realm: String, algorithm: DigestAlgorithm = .md5, qop: Bool = true, stale: Bool = false,
        opaque: String? = nil
    ) -> DigestChallenge {
        DigestChallenge(
            realm: realm, nonce: Hex.random(bytes: 16), opaque: opaque, algorithm: algorithm,
            qopOptions: qop ? ["auth"] : [], stale: stale)
    }
}
