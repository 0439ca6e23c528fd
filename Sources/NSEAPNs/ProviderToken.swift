import Crypto
import JWTKit
import NSECrypto
import NSEJSON
public import NSESystem

/// APNs's provider authentication token: a JWT signed with ES256 by the team's APNs key (`AuthKey_KEYID.p8`),
/// header `{"alg": "ES256", "kid": KEYID}`, claims `{"iss": TEAMID, "iat": SECONDS}`.
///
/// This is the only file that touches jwt-kit: signing and signature checks are jwt-kit's (over swift-crypto),
/// the APNs rules around them (which claim, which reason) are ours.
public enum ProviderToken {
    /// APNs refuses tokens issued longer ago than this: `ExpiredProviderToken`.
    public static let lifetimeSeconds: Int64 = 3600
    /// APNs refuses a new token on a connection sooner than this after the last: `TooManyProviderTokenUpdates`.
    public static let minimumRenewalSeconds: Int64 = 20 * 60
    /// Clock skew tolerated for an `iat` in the future.
    public static let futureSkewSeconds: Int64 = 60

    /// The verified content of a token.
    public struct Claims: Sendable, Equatable {
        public var keyID: String
        public var teamID: String
        /// Unix seconds; a NumericDate may have a fraction (RFC 7519 §2), as clients that sign `time.time()` send.
        public var issuedAt: Double
    }

    /// Why a token is refused, as APNs names it.
    public enum Rejection: String, Error, Sendable {
        /// No `authorization: bearer …` header.
        case missing = "MissingProviderToken"
        /// Malformed, not ES256, an unknown key id, a bad signature, another team, or an `iat` in the future.
        case invalid = "InvalidProviderToken"
        /// `iat` older than an hour.
        case expired = "ExpiredProviderToken"
    }
}

/// Why a key could not be loaded: a one-line message naming the file, never the key.
public struct ProviderKeyError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// Signs provider tokens for `nse push`, as a provider server does with its `.p8` key.
public struct ProviderTokenSigner: Sendable {
    public let keyID: String
    public let teamID: String
    private let keys: JWTKeyCollection

    /// - Parameters:
    ///   - keyFile: the PKCS #8 PEM file Apple hands out (`AuthKey_KEYID.p8`), or a SEC1 EC key PEM.
    ///   - keyID: the key's 10-character id (the `kid`).
    ///   - teamID: the team id (the `iss`).
    public init(keyFile: String, keyID: String, teamID: String) async throws(ProviderKeyError) {
        let pem = try ProviderKeys.readPEM(keyFile)
        guard let key = try? ES256PrivateKey(pem: pem) else {
            throw ProviderKeyError(description: "\(keyFile): not an EC P-256 private key in PEM (AuthKey_KEYID.p8)")
        }
        (self.keyID, self.teamID) = (keyID, teamID)
        keys = await ProviderKeys.collection(key, keyID: keyID)
    }

    /// A token issued at `issuedAt` (Unix seconds; now when omitted).
    public func token(issuedAt: Int64 = SystemClock.unixSeconds()) async throws(ProviderKeyError) -> String {
        do {
            return try await keys.sign(
                APNsClaims(iss: teamID, iat: issuedAt), kid: JWKIdentifier(string: keyID),
                header: ["alg": .string("ES256"), "kid": .string(keyID)])
        } catch {
            throw ProviderKeyError(description: "could not sign the provider token: \(error)")
        }
    }
}

/// Checks provider tokens for `nse serve` against the team's key, as APNs does.
public struct ProviderTokenVerifier: Sendable {
    public let keyID: String
    public let teamID: String
    private let keys: JWTKeyCollection

    /// - Parameters:
    ///   - keyFile: the `.p8` private key (its public half is used) or an EC P-256 public key PEM.
    ///   - keyID: the key id tokens must name in `kid`.
    ///   - teamID: the team id tokens must name in `iss`.
    public init(keyFile: String, keyID: String, teamID: String) async throws(ProviderKeyError) {
        let pem = try ProviderKeys.readPEM(keyFile)
        let key: ES256PublicKey
        if let privateKey = try? ES256PrivateKey(pem: pem) {
            key = privateKey.publicKey
        } else if let publicKey = try? ES256PublicKey(pem: pem) {
            key = publicKey
        } else {
            throw ProviderKeyError(description: "\(keyFile): not an EC P-256 private or public key in PEM")
        }
        (self.keyID, self.teamID) = (keyID, teamID)
        keys = await ProviderKeys.collection(key, keyID: keyID)
    }

    /// Verifies the value of an `authorization` header (`bearer <jwt>`, scheme case-insensitive).
    /// - Parameter now: Unix seconds.
    public func verify(authorization: String?, now: Int64 = SystemClock.unixSeconds()) async -> Result<
        ProviderToken.Claims, ProviderToken.Rejection
    > {
        guard let token = authorization.flatMap(Self.bearerToken) else { return .failure(.missing) }

        // The parts jwt-kit does not judge the way APNs does: the header's alg and kid, the claims' iss and iat.
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let header = Self.decodeSegment(segments[0]), let claims = Self.decodeSegment(segments[1]),
            header["alg"]?.stringValue == "ES256", header["kid"]?.stringValue == keyID,
            claims["iss"]?.stringValue == teamID, let issuedAt = claims["iat"].flatMap(Self.numericDate)
        else { return .failure(.invalid) }
        do {
            _ = try await keys.verify(token, as: UncheckedClaims.self)
        } catch {
            // APNs also takes an ES256 signature in DER (an ASN.1 sequence of r and s), as apnotic signs, besides
            // JWS's 64 bytes of r and s (RFC 7518 §3.4).
            guard let joseForm = Self.withJOSESignature(segments),
                (try? await keys.verify(joseForm, as: UncheckedClaims.self)) != nil
            else { return .failure(.invalid) }
        }
        if issuedAt > Double(now + ProviderToken.futureSkewSeconds) { return .failure(.invalid) }
        if Double(now) - issuedAt > Double(ProviderToken.lifetimeSeconds) { return .failure(.expired) }
        return .success(ProviderToken.Claims(keyID: keyID, teamID: teamID, issuedAt: issuedAt))
    }

    /// An issue time as APNs takes it: a NumericDate (RFC 7519 §2: a JSON number, integer or not), or the same
    /// number written as a string of digits, which APNs accepts too (APNSwift 5–6 and kalyke-apns send one:
    /// docs/serve.md). Compared as a number.
    static func numericDate(_ value: JSON) -> Double? {
        switch value {
        case .int(let seconds): return Double(seconds)
        case .double(let seconds) where seconds.isFinite: return seconds
        case .string(let text):
            // Digits, with an optional fraction: not Double's own parser, which takes "inf", "0x1p3", " 1".
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            guard !parts[0].isEmpty, parts[0].count <= 15,
                parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
                parts.count == 1 || !parts[1].isEmpty
            else { return nil }
            return Double(text)
        default: return nil
        }
    }

    /// The token with its signature turned from DER into JWS's r and s, when it is a DER ECDSA signature.
    static func withJOSESignature(_ segments: [Substring]) -> String? {
        guard segments.count == 3, let der = Base64.decodeURLSafe(String(segments[2])), der.first == 0x30,
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else { return nil }
        return segments[0] + "." + segments[1] + "." + Base64.encodeURLSafe(Array(signature.rawRepresentation))
    }

    /// The key id (`kid`) a token's header names, unverified: which key to verify it with.
    public static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".", maxSplits: 1).first else { return nil }
        return decodeSegment(header)?["kid"]?.stringValue
    }

    /// The team (`iss`) a token's claims name, unverified: whose connection it is, before it is checked.
    public static func issuer(of token: String) -> String? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { return nil }
        return decodeSegment(segments[1])?["iss"]?.stringValue
    }

    /// The token in an `authorization` header value (`bearer <jwt>`, scheme case-insensitive), or `nil`.
    public static func bearerToken(_ authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1]).trimmingSpaces()
        return token.isEmpty ? nil : token
    }

    static func decodeSegment(_ segment: Substring) -> JSON? {
        guard let bytes = Base64.decodeURLSafe(String(segment)), let json = try? JSON.parse(bytes),
            json.objectValue != nil
        else {
            return nil
        }
        return json
    }
}

/// Reading key files, and the jwt-kit key collection holding one key under its id.
enum ProviderKeys {
    static func collection(_ key: some ECDSAKey, keyID: String) async -> JWTKeyCollection {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        return keys
    }

    static func readPEM(_ path: String) throws(ProviderKeyError) -> String {
        let text: String?
        do { text = try FileSystem.readText(path, limit: 64 * 1024) } catch {
            throw ProviderKeyError(description: error.description)
        }
        guard let text else { throw ProviderKeyError(description: "\(path): no such file") }
        guard text.contains("-----BEGIN ") else { throw ProviderKeyError(description: "\(path): not a PEM file") }
        return text
    }
}

/// The claims APNs reads: the team and the issue time (Unix seconds, an integer, as Apple's examples send it).
struct APNsClaims: JWTPayload {
    var iss: String
    var iat: Int64

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// For the signature check alone: the claims are judged from the decoded JSON, reason by reason.
struct UncheckedClaims: JWTPayload {
    init(from decoder: any Decoder) throws {}
    func encode(to encoder: any Encoder) throws {}
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " || view.first == "\t" { view = view.dropFirst() }
        while view.last == " " || view.last == "\t" { view = view.dropLast() }
        return String(view)
    }
}

/// A provider's current token: one token reused for 50 minutes, then a new one, as Apple asks providers to do
/// (never older than an hour, never renewed more than every 20 minutes). For long-running senders such as
/// `nse sip-server`.
public actor ProviderTokenCache {
    /// How long one token is used.
    public static let renewAfterSeconds: Int64 = 50 * 60
    private let signer: ProviderTokenSigner
    private var current: (token: String, issuedAt: Int64)?

    public init(signer: ProviderTokenSigner) {
        self.signer = signer
    }

    /// The token to send now; `nil` if signing failed.
    public func token(now: Int64 = SystemClock.unixSeconds()) async -> String? {
        if let current, now - current.issuedAt < Self.renewAfterSeconds { return current.token }
        guard let token = try? await signer.token(issuedAt: now) else { return nil }
        current = (token, now)
        return token
    }
}
