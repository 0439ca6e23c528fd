/// The envelope for a person with several devices (format `nse3`, docs/envelope.md): the content encrypted once
/// under a random key, that key sealed to each recipient device, the whole signed by the sender.
///
/// Text form (one line, URL-safe characters and dots only):
/// ```
/// nse3.xchacha20poly1305-sealedbox-ed25519.<recipients>.<content>
/// ```
/// - recipients: base64url of one 88-byte entry per device: its key id (the 8 bytes ``PublicKey/keyID`` encodes),
///   then `crypto_box_seal` of the 32-byte content key to its X25519 key (80 bytes).
/// - content: base64url of a 24-byte nonce, then XChaCha20-Poly1305 (IETF) of the sender's 64-byte Ed25519
///   signature followed by the plaintext, with the text up to and including the third dot as associated data.
/// - The signature covers that same header text, then the plaintext: the recipient list is under it, so a
///   recipient who re-wraps the content key for someone else cannot keep the sender's signature.
///
/// One body for every device: the server forks the same bytes to each (as liblinphone's LIME sends one cipher
/// message with a key header per device), and each extra device costs 88 bytes rather than a whole copy.
public struct MultiEnvelope: Sendable, Equatable {
    public static let tag = "nse3"
    public static let algorithm = "xchacha20poly1305-sealedbox-ed25519"
    /// The most devices one envelope is sealed to (Flexisip's fork contexts are bounded too; a person has a few).
    public static let maxRecipients = 256
    /// The longest text form read (checked before anything is decoded).
    public static let maxTextBytes = 1 << 20
    static let keyIDBytes = 8
    static let contentKeyBytes = 32
    /// One recipient entry: key id, then the sealed content key.
    public static var entryBytes: Int { keyIDBytes + contentKeyBytes + Sodium.sealOverhead }

    /// One recipient: the id of the key its share is sealed to, and that share.
    public struct Recipient: Sendable, Equatable {
        public var keyID: String
        /// `crypto_box_seal` of the content key to the recipient's key.
        public var sealedKey: [UInt8]
    }

    public var recipients: [Recipient]
    /// The nonce, then the AEAD ciphertext.
    public var content: [UInt8]

    /// What a recipient opened: the signature, the plaintext and the bytes the signature is over.
    public struct Opened: Sendable {
        public var signature: [UInt8]
        public var plaintext: [UInt8]
        /// The header text, then the plaintext: what the sender signed.
        public var signedMessage: [UInt8]

        /// Overwrites the plaintext (in both places) once it has been used.
        public mutating func wipe() {
            Sodium.wipe(&plaintext)
            Sodium.wipe(&signedMessage)
        }
    }

    /// Whether `text` starts as this format (`nse3.`).
    public static func hasFormatTag(_ text: some StringProtocol) -> Bool { text.hasPrefix(tag + ".") }

    /// The key ids of the recipients, in the sender's order.
    public var keyIDs: [String] { recipients.map(\.keyID) }

    // MARK: - sealing

    /// Encrypts `plaintext` once, seals its key to each of `recipients` (1 to ``maxRecipients`` distinct keys) and
    /// signs header and plaintext with `signer`.
    public static func seal(_ plaintext: [UInt8], signedBy signer: SigningSecretKey, to recipients: [PublicKey])
        throws(CryptoError) -> MultiEnvelope
    {
        guard (1...maxRecipients).contains(recipients.count) else {
            throw CryptoError(
                code: .invalidKey,
                description: "an nse3 envelope has 1 to \(maxRecipients) recipients, not \(recipients.count)")
        }
        guard Set(recipients.map(\.bytes)).count == recipients.count else {
            throw CryptoError(code: .invalidKey, description: "a recipient key is given twice")
        }
        var key = try Sodium.randomBytes(contentKeyBytes)
        defer { Sodium.wipe(&key) }
        var entries: [Recipient] = []
        entries.reserveCapacity(recipients.count)
        for recipient in recipients {
            entries.append(Recipient(keyID: recipient.keyID, sealedKey: try Sodium.seal(key, to: recipient.bytes)))
        }
        var envelope = MultiEnvelope(recipients: entries, content: [])
        let header = Array(envelope.header.utf8)
        var signed = header + plaintext
        defer { Sodium.wipe(&signed) }
        var inner = try signer.sign(signed) + plaintext
        defer { Sodium.wipe(&inner) }
        let nonce = try Sodium.randomBytes(Sodium.aeadNonceBytes)
        envelope.content = nonce + (try Sodium.aeadEncrypt(inner, additionalData: header, nonce: nonce, key: key))
        return envelope
    }

    // MARK: - text form

    /// Everything before the content: format tag, algorithm and recipients, each followed by a dot. The AEAD's
    /// associated data and the start of what is signed.
    var header: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recipients.count * Self.entryBytes)
        for recipient in recipients {
            bytes += Base64.decodeURLSafe(recipient.keyID) ?? []
            bytes += recipient.sealedKey
        }
        return "\(Self.tag).\(Self.algorithm).\(Base64.encodeURLSafe(bytes))."
    }

    /// The one-line text form.
    public var text: String { header + Base64.encodeURLSafe(content) }

    /// Parses the text form; every size is checked before what it sizes is decoded.
    public init(text: String) throws(EnvelopeError) {
        guard text.utf8.count <= Self.maxTextBytes else {
            throw EnvelopeError(
                .malformed,
                "the envelope is \(text.utf8.count) bytes, more than an nse3 envelope may be (\(Self.maxTextBytes))")
        }
        let trimmed = text.trimmingASCIIWhitespace()
        let fields = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard fields.first == Substring(Self.tag) else {
            throw EnvelopeError(.malformed, "the envelope does not start with \"\(Self.tag).\"")
        }
        guard fields.count == 4 else {
            throw EnvelopeError(.malformed, "an nse3 envelope has 4 dot-separated fields, this one has \(fields.count)")
        }
        guard fields[1] == Self.algorithm else {
            throw EnvelopeError(
                .unsupportedAlgorithm,
                "envelope algorithm \"\(EnvelopeError.printable(fields[1], 40))\" is not supported")
        }
        // base64url without padding: 4 characters per 3 bytes, rounded up.
        let longest = (Self.maxRecipients * Self.entryBytes * 4 + 2) / 3
        guard !fields[2].isEmpty else { throw EnvelopeError(.malformed, "the nse3 envelope names no recipient") }
        guard fields[2].utf8.count <= longest else {
            throw EnvelopeError(.malformed, "the nse3 envelope names more than \(Self.maxRecipients) recipients")
        }
        guard let list = Base64.decodeURLSafe(String(fields[2])) else {
            throw EnvelopeError(.notBase64, "the envelope's recipient list is not URL-safe base64")
        }
        guard list.count % Self.entryBytes == 0 else {
            throw EnvelopeError(
                .truncated,
                "the recipient list is \(list.count) bytes, not a whole number of \(Self.entryBytes)-byte entries")
        }
        var recipients: [Recipient] = []
        recipients.reserveCapacity(list.count / Self.entryBytes)
        var seen = Set<String>()
        for start in stride(from: 0, to: list.count, by: Self.entryBytes) {
            let keyID = Base64.encodeURLSafe(Array(list[start..<start + Self.keyIDBytes]))
            guard seen.insert(keyID).inserted else {
                throw EnvelopeError(.malformed, "the recipient list names key \(keyID) twice")
            }
            recipients.append(
                Recipient(keyID: keyID, sealedKey: Array(list[start + Self.keyIDBytes..<start + Self.entryBytes])))
        }
        guard !fields[3].isEmpty, let content = Base64.decodeURLSafe(String(fields[3])) else {
            throw EnvelopeError(.notBase64, "the envelope's content is not URL-safe base64")
        }
        let shortest = Sodium.aeadNonceBytes + Sodium.aeadOverhead + Sodium.signatureBytes
        guard content.count >= shortest else {
            throw EnvelopeError(
                .truncated,
                "the content is \(content.count) bytes, shorter than its nonce, tag and signature (\(shortest))")
        }
        self.init(recipients: recipients, content: content)
    }

    init(recipients: [Recipient], content: [UInt8]) {
        self.recipients = recipients
        self.content = content
    }

    // MARK: - opening

    /// Opens the share sealed to `keyID` with `secretKey` (the device's key of that id), then the content.
    /// `envelope-not-recipient` when no entry is for `keyID`: a device that was not among the recipients (one added
    /// after the message was sent) cannot find or open another's.
    public func open(with secretKey: SecretKey, keyID: String) throws(EnvelopeError) -> Opened {
        guard let entry = recipients.first(where: { $0.keyID == keyID }) else {
            throw EnvelopeError(
                .notRecipient,
                "the envelope is sealed to \(recipients.count) device key(s), none of them this device's \(EnvelopeError.printable(keyID, 16))"
            )
        }
        let publicKey: PublicKey
        do { publicKey = try secretKey.publicKey() } catch {
            throw EnvelopeError(.wrongKey, "the device's key pair is unusable: \(error.description)")
        }
        guard publicKey.keyID == keyID else {
            throw EnvelopeError(.wrongKey, "the key given is not the key \(EnvelopeError.printable(keyID, 16))")
        }
        let opened: [UInt8]?
        do { opened = try Sodium.open(entry.sealedKey, publicKey: publicKey.bytes, secretKey: secretKey.bytes) } catch {
            throw EnvelopeError(.authenticationFailed, error.description)
        }
        guard var key = opened, key.count == Self.contentKeyBytes else {
            throw EnvelopeError(
                .authenticationFailed, "this device's share of the content key does not authenticate (tampered)")
        }
        defer { Sodium.wipe(&key) }
        let header = Array(self.header.utf8)
        let nonce = Array(content.prefix(Sodium.aeadNonceBytes))
        let ciphertext = Array(content.dropFirst(Sodium.aeadNonceBytes))
        guard var inner = Sodium.aeadDecrypt(ciphertext, additionalData: header, nonce: nonce, key: key) else {
            throw EnvelopeError(
                .authenticationFailed,
                "the content does not authenticate (tampered, or its recipient list was altered)")
        }
        defer { Sodium.wipe(&inner) }
        let plaintext = Array(inner.dropFirst(Sodium.signatureBytes))
        return Opened(
            signature: Array(inner.prefix(Sodium.signatureBytes)), plaintext: plaintext,
            signedMessage: header + plaintext)
    }
}
