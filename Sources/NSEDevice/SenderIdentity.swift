public import NSECrypto
import NSEJSON
import NSESystem

/// A sender's signing identity on disk (`nse keys init FILE`): an Ed25519 key pair in a JSON file only its owner may
/// read, `{"kind":"nse-sender-identity","public_key":…,"secret_key":…}`. Envelopes signed with it (format `nse2`)
/// are shown as from a verified sender by a device that trusts its public key for the sender's address.
public struct SenderIdentity: Sendable {
    public let secretKey: SigningSecretKey
    public let publicKey: SigningPublicKey

    static let kind = "nse-sender-identity"

    /// Makes a new identity and writes it to `path` (mode 0600); refuses to overwrite a file.
    public static func create(at path: String) throws(DeviceError) -> SenderIdentity {
        guard !FileSystem.exists(path) else {
            throw DeviceError(.alreadyExists, "\(path) already exists; remove it first to make a new identity")
        }
        let identity: SenderIdentity
        do {
            let secret = try SigningSecretKey.generate()
            identity = SenderIdentity(secretKey: secret, publicKey: try secret.publicKey())
        } catch {
            throw DeviceError(.io, "no signing key: \(error.description)")
        }
        let document: JSON = [
            "kind": .string(kind), "public_key": .string(identity.publicKey.base64),
            "secret_key": .string(identity.secretKey.exportBase64()),
        ]
        do { try FileSystem.writeAtomically(path, document.serialized(.pretty) + "\n", mode: 0o600) } catch {
            throw DeviceError(.io, "\(path): \(error.description)")
        }
        return identity
    }

    /// Reads an identity file, refusing one that anyone but its owner can read.
    public static func load(_ path: String) throws(DeviceError) -> SenderIdentity {
        let text = try OwnerOnlyFile.read(path, what: "a signing key") { error in
            DeviceError(.notFound, "the identity file is missing: \(error.description)")
        }
        guard let text, let document = (try? JSON.parse(text))?.objectValue, document["kind"]?.stringValue == kind,
            let secretText = document["secret_key"]?.stringValue, let bytes = Base64.decode(secretText)
        else {
            throw DeviceError(.corrupt, "\(path) is not an nse sender identity (make one with `nse keys init FILE`)")
        }
        do {
            let secret = try SigningSecretKey(bytes: bytes)
            return SenderIdentity(secretKey: secret, publicKey: try secret.publicKey())
        } catch {
            throw DeviceError(.corrupt, "\(path): \(error.description)")
        }
    }

    /// Signs a plaintext as this sender and seals it to `recipient` (format `nse2`). The plaintext (a JSON object)
    /// gains what the receiver checks: `sender_key` (this identity's public key), `to_key` (the recipient key's id, so
    /// that the signed content cannot be re-sealed to another device), `message_id` (random unless given: a replay is
    /// refused) and `sent_at` (now, unless given).
    public func seal(_ plaintext: [UInt8], to recipient: PublicKey, messageID: String? = nil) throws(DeviceError)
        -> Envelope
    {
        let signed = try claims(plaintext, to: recipient, messageID: messageID)
        do { return try Envelope.seal(signed, signedBy: secretKey, to: recipient) } catch {
            throw DeviceError(.io, "cannot seal: \(error.description)")
        }
    }

    /// The plaintext as this sender signs it for `recipient`: with `sender_key`, `to_key`, `message_id` and
    /// `sent_at` (``seal(_:to:messageID:)``).
    public func claims(_ plaintext: [UInt8], to recipient: PublicKey, messageID: String? = nil) throws(DeviceError)
        -> [UInt8]
    {
        try claims(plaintext, toKey: recipient.keyID, messageID: messageID)
    }

    /// The claims for one recipient (`toKey`, its key id) or, nil, for several (the envelope names them).
    func claims(_ plaintext: [UInt8], toKey: String?, messageID: String?) throws(DeviceError) -> [UInt8] {
        guard var object = (try? JSON.parse(plaintext))?.objectValue else {
            throw DeviceError(.invalidOption, "a signed plaintext must be a JSON object")
        }
        object["sender_key"] = .string(publicKey.base64)
        object["to_key"] = toKey.map(JSON.string)
        let id: String
        do { id = try messageID ?? SecureRandom.hex(16) } catch {
            throw DeviceError(.io, "no message id: \(error)")
        }
        object["message_id"] = .string(id)
        if object["sent_at"] == nil {
            object["sent_at"] = .string(SystemClock.rfc3339(unixSeconds: SystemClock.unixMilliseconds() / 1000))
        }
        return Array(JSON.object(object).serializedBytes())
    }

    /// A public key given as base64, or as the path of an identity file (whose public key is read; the file's
    /// mode is not checked, only its public half is used).
    public static func publicKey(_ given: String) throws(DeviceError) -> SigningPublicKey {
        if let key = try? SigningPublicKey(base64: given) { return key }
        guard FileSystem.exists(given) else {
            throw DeviceError(.invalidOption, "--key must be a base64 Ed25519 public key or an identity file")
        }
        let text = (try? FileSystem.readText(given, limit: 8192)) ?? nil
        guard let text, let document = (try? JSON.parse(text))?.objectValue,
            let publicText = document["public_key"]?.stringValue, let key = try? SigningPublicKey(base64: publicText)
        else {
            throw DeviceError(.invalidOption, "\(given) holds no sender public key")
        }
        return key
    }
}
