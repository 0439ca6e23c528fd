import NSECrypto
import NSESystem

/// A digest hash algorithm (RFC 2617, RFC 7616, RFC 8760).
public enum DigestAlgorithm: String, Sendable, Hashable {
    /// MD5 (the default when no algorithm is given).
    case md5 = "MD5"
    /// MD5 with session keys.
    case md5Sess = "MD5-sess"
    /// SHA-256 (RFC 8760).
    case sha256 = "SHA-256"
    /// SHA-256 with session keys.
    case sha256Sess = "SHA-256-sess"

    /// Parses an algorithm token case-insensitively.
    public init?(token: String) {
        switch ASCII.lowercased(SIPSyntax.unquote(Substring(token))) {
        case "md5": self = .md5
        case "md5-sess": self = .md5Sess
        case "sha-256": self = .sha256
        case "sha-256-sess": self = .sha256Sess
        default: return nil
        }
    }

    /// True for the `-sess` variants.
    public var isSession: Bool { self == .md5Sess || self == .sha256Sess }

    /// Hashes a UTF-8 string and returns lowercase hex.
    public func hash(_ text: String) -> String {
        switch self {
        case .md5, .md5Sess: return MD5.hex(text)
        case .sha256, .sha256Sess: return Hex.encode(Digest.sha256(text.utf8))
        }
    }

    /// Computes the digest `response` value (RFC 2617 §3.2.2, RFC 7616 §3.4.1); qop nil gives the RFC 2069 form.
    public func response(
        username: String, realm: String, password: String, nonce: String, method: String,
        uri: String, qop: String?, cnonce: String?, nonceCount: String?
    ) -> String {
        var ha1 = hash("\(username):\(realm):\(password)")
        if isSession { ha1 = hash("\(ha1):\(nonce):\(cnonce ?? "")") }
        let ha2 = hash("\(method):\(uri)")
        if let qop {
            return hash("\(ha1):\(nonce):\(nonceCount ?? "00000001"):\(cnonce ?? ""):\(qop):\(ha2)")
        }
        return hash("\(ha1):\(nonce):\(ha2)")
    }
}

/// Parses `key=value, key="quoted"` auth-param lists.
enum AuthParams {
    static func parse(_ text: Substring) throws(SIPError) -> [SIPParameter] {
        var out: [SIPParameter] = []
        for item in SIPSyntax.splitTopLevel(text, separator: 0x2C) {
            let t = SIPSyntax.trim(item)
            if t.isEmpty { continue }
            guard let eq = t.utf8.firstIndex(of: 0x3D) else { throw .malformed("auth parameter without value") }
            let name = SIPSyntax.trim(t[t.startIndex..<eq])
            guard SIPSyntax.isToken(name) else { throw .malformed("invalid auth parameter name") }
            out.append(SIPParameter(String(name), SIPSyntax.unquote(t[t.utf8.index(after: eq)...])))
        }
        return out
    }

    /// Splits `Digest a=b, c=d` into scheme and parameter text.
    static func splitScheme(_ text: String) throws(SIPError) -> (scheme: String, rest: Substring) {
        let t = SIPSyntax.trim(Substring(text))
        guard let sp = t.utf8.firstIndex(where: { $0 == 0x20 || $0 == 0x09 }) else {
            throw .malformed("auth header without parameters")
        }
        return (String(t[t.startIndex..<sp]), t[sp...])
    }
}
