import Crypto
import FoundationEssentials
public import NSECrypto

/// Content sealed with HPKE (RFC 9180) to the device's X25519 key, for an extension that opens it with CryptoKit:
/// what a provider puts in a push's `"enc"` for an app whose Notification Service Extension is its own
/// (`nse seal --hpke`, docs/envelope.md). nse's own envelopes (``Envelope``: libsodium's sealed boxes, XSalsa20) have
/// no CryptoKit counterpart; this one opens with `HPKE.Recipient(privateKey:ciphersuite:info:encapsulatedKey:)` and
/// `open(_:authenticating:)`.
///
/// Text form (one line, URL-safe characters and dots only):
/// ```
/// hpke1.<base64url(encapsulated key)>.<base64url(ciphertext)>
/// ```
/// Base mode, ciphersuite DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305
/// (`HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly`); the recipient key is the device's `crypto_box` key pair, an
/// X25519 key as CryptoKit's `Curve25519.KeyAgreement` reads it. One message per encapsulation (sequence number 0).
/// The info string binds the ciphertext to its use (``defaultInfo`` unless the sender gives another); the AAD is the
/// format tag, so that no later format can be fed this one's ciphertext. Anonymous, like `nse1`: anyone who knows
/// the public key can seal. No key id: a wrong key and a tampered envelope both fail to authenticate.
///
/// swift-crypto's HPKE, in this module rather than NSECrypto: NSECrypto is libsodium's alone because the
/// per-notification executables link it, and only the provider side (`nse seal`) seals.
public struct HPKEEnvelope: Sendable, Equatable {
    /// The format tag and version.
    public static let tag = "hpke1"
    /// The info string `nse seal --hpke` uses unless given `--info`.
    public static let defaultInfo = "nse-hpke1"
    /// The additional authenticated data of every `hpke1` ciphertext: the format tag's ASCII bytes.
    public static let additionalData: [UInt8] = Array(tag.utf8)

    /// The sender's ephemeral X25519 public key (32 bytes): HPKE's `enc`.
    public var encapsulatedKey: [UInt8]
    /// The ChaCha20-Poly1305 ciphertext, its 16-byte tag last.
    public var ciphertext: [UInt8]

    public init(encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
        self.encapsulatedKey = encapsulatedKey
        self.ciphertext = ciphertext
    }

    /// Seals `plaintext` to `recipient` with a fresh ephemeral key.
    public static func seal(_ plaintext: [UInt8], to recipient: PublicKey, info: String = defaultInfo)
        throws(NSECrypto.CryptoError) -> HPKEEnvelope
    {
        do {
            let key = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: recipient.bytes)
            // RFC 9180 (7.1.4) requires refusing an all-zero X25519 shared secret; swift-crypto, like CryptoKit, does
            // not check. A point of small order gives it with every key: sealed to one, anyone could open the box.
            let probe = try Curve25519.KeyAgreement.PrivateKey().sharedSecretFromKeyAgreement(with: key)
            guard probe.withUnsafeBytes({ $0.contains { $0 != 0 } }) else { throw LowOrderPoint() }
            var sender = try HPKE.Sender(
                recipientKey: key, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: Data(info.utf8))
            let sealed = try sender.seal(plaintext, authenticating: additionalData)
            return HPKEEnvelope(encapsulatedKey: Array(sender.encapsulatedKey), ciphertext: Array(sealed))
        } catch is LowOrderPoint {
            throw NSECrypto.CryptoError(
                code: .invalidKey, description: "cannot seal with HPKE to this public key (a point of small order)")
        } catch {
            throw NSECrypto.CryptoError(code: .invalidKey, description: "cannot seal with HPKE to this public key")
        }
    }

    private struct LowOrderPoint: Error {}

    /// The one-line text form.
    public var text: String {
        "\(Self.tag).\(Base64.encodeURLSafe(encapsulatedKey)).\(Base64.encodeURLSafe(ciphertext))"
    }

    /// Parses the text form (its fields only: whether it opens is the recipient's to find).
    public init(text: String) throws(EnvelopeError) {
        let fields = text.split(separator: ".", omittingEmptySubsequences: false)
        guard fields.first == Substring(Self.tag) else {
            throw EnvelopeError(.unsupportedVersion, "not an \(Self.tag) envelope")
        }
        guard fields.count == 3 else {
            throw EnvelopeError(
                .malformed, "an \(Self.tag) envelope has 3 dot-separated fields, this one has \(fields.count)")
        }
        guard let key = Base64.decodeURLSafe(String(fields[1])), let sealed = Base64.decodeURLSafe(String(fields[2]))
        else { throw EnvelopeError(.notBase64, "the envelope's fields are not URL-safe base64") }
        guard key.count == 32, sealed.count >= 16 else {
            throw EnvelopeError(
                .truncated, "an \(Self.tag) envelope holds a 32-byte key and a ciphertext of 16 bytes or more")
        }
        self.init(encapsulatedKey: key, ciphertext: sealed)
    }
}
