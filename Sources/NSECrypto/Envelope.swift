/// The sealed envelope that carries end-to-end-encrypted content, in a payload's `"enc"` key or a SIP MESSAGE body.
///
/// Text form (one line, URL-safe characters and dots only):
/// ```
/// nse1.x25519-sealedbox.<key id>.<base64url(crypto_box_seal(plaintext))>
/// ```
/// `nse1` names the format and its version, the second field the algorithm, the third the recipient key's
/// ``PublicKey/keyID``, the last the sealed box (ephemeral public key, then the MAC'd ciphertext).
///
/// Format 2 (`nse2.x25519-sealedbox-ed25519.…`) is signed, then sealed: the sealed box holds the sender's 64-byte
/// Ed25519 signature of the plaintext, then the plaintext (which names the sender and its key; docs/envelope.md).
/// Format 1 stays: anonymous.
public struct Envelope: Sendable, Equatable {
    /// Anonymous (format 1) or signed by its sender (format 2).
    public enum Format: Sendable, Equatable, CaseIterable {
        case anonymous
        case signed

        public var tag: String { self == .anonymous ? "nse1" : "nse2" }
        public var algorithm: String { self == .anonymous ? "x25519-sealedbox" : "x25519-sealedbox-ed25519" }
    }

    public var format: Format
    /// The recipient key's identifier.
    public var keyID: String
    /// The sealed box.
    public var sealed: [UInt8]

    public init(format: Format = .anonymous, keyID: String, sealed: [UInt8]) {
        self.format = format
        self.keyID = keyID
        self.sealed = sealed
    }

    /// Whether `text` starts as an envelope of a format this build reads (`nse1.`, `nse2.`, or `nse3.`:
    /// ``MultiEnvelope``).
    public static func hasFormatTag(_ text: some StringProtocol) -> Bool {
        Format.allCases.contains { text.hasPrefix($0.tag + ".") } || MultiEnvelope.hasFormatTag(text)
    }

    /// Whether a MESSAGE body carries an envelope: bare, or as the content after a wrapper's headers (CPIM). What a
    /// recorded case may keep of a body: sealed content stays sealed.
    public static func isCarried(by body: String) -> Bool {
        if hasFormatTag(body) { return true }
        guard let separator = body.ranges(of: "\r\n\r\n").last else { return false }
        return hasFormatTag(body[separator.upperBound...].drop { $0.isWhitespace })
    }

    /// Seals `plaintext` to `recipient`, anonymously.
    public static func seal(_ plaintext: [UInt8], to recipient: PublicKey) throws(CryptoError) -> Envelope {
        Envelope(keyID: recipient.keyID, sealed: try Sodium.seal(plaintext, to: recipient.bytes))
    }

    /// Signs `plaintext` with `signer`, then seals signature and plaintext to `recipient` (format 2).
    public static func seal(_ plaintext: [UInt8], signedBy signer: SigningSecretKey, to recipient: PublicKey)
        throws(CryptoError) -> Envelope
    {
        let signed = try signer.sign(plaintext) + plaintext
        return Envelope(format: .signed, keyID: recipient.keyID, sealed: try Sodium.seal(signed, to: recipient.bytes))
    }

    /// Seals any signature beside any plaintext to `recipient` as a format-2 envelope: for testing a receiver (a
    /// signature that does not verify), never for sending.
    public static func seal(signature: [UInt8], plaintext: [UInt8], to recipient: PublicKey) throws(CryptoError)
        -> Envelope
    {
        Envelope(
            format: .signed, keyID: recipient.keyID, sealed: try Sodium.seal(signature + plaintext, to: recipient.bytes)
        )
    }

    /// A format-2 envelope's opened bytes, split: the signature and the signed plaintext.
    public static func signedParts(_ opened: [UInt8]) throws(EnvelopeError) -> (signature: [UInt8], plaintext: [UInt8])
    {
        guard opened.count > Sodium.signatureBytes else {
            throw EnvelopeError(
                .truncated, "a signed envelope holds a \(Sodium.signatureBytes)-byte signature, then its content")
        }
        return (Array(opened.prefix(Sodium.signatureBytes)), Array(opened.dropFirst(Sodium.signatureBytes)))
    }

    /// The one-line text form.
    public var text: String {
        "\(format.tag).\(format.algorithm).\(keyID).\(Base64.encodeURLSafe(sealed))"
    }

    /// Parses the text form.
    public init(text: String) throws(EnvelopeError) {
        let trimmed = text.trimmingASCIIWhitespace()
        let fields = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard let tag = fields.first, tag.hasPrefix("nse") else {
            throw EnvelopeError(.malformed, "the envelope does not start with a format tag like \"nse1\"")
        }
        let format: Format
        switch tag {
        case Format.anonymous.tag: format = .anonymous
        case Format.signed.tag: format = .signed
        default:
            throw EnvelopeError(
                .unsupportedVersion,
                "envelope format \"\(EnvelopeError.printable(tag, 16))\" is not supported (this build reads nse1 and nse2)"
            )
        }
        guard fields.count == 4 else {
            throw EnvelopeError(
                .malformed, "an \(format.tag) envelope has 4 dot-separated fields, this one has \(fields.count)"
            )
        }
        guard fields[1] == format.algorithm else {
            throw EnvelopeError(
                .unsupportedAlgorithm,
                "envelope algorithm \"\(EnvelopeError.printable(fields[1], 32))\" is not supported")
        }
        guard let sealed = Base64.decodeURLSafe(String(fields[3])) else {
            throw EnvelopeError(.notBase64, "the envelope's sealed box is not URL-safe base64")
        }
        self.init(format: format, keyID: String(fields[2]), sealed: sealed)
    }

    /// Opens the envelope with the recipient's secret key.
    public func open(with secretKey: SecretKey) throws(EnvelopeError) -> [UInt8] {
        let publicKey: PublicKey
        do { publicKey = try secretKey.publicKey() } catch {
            throw EnvelopeError(.wrongKey, "the device's key pair is unusable: \(error.description)")
        }
        guard keyID == publicKey.keyID else {
            throw EnvelopeError(
                .wrongKey,
                "the envelope is sealed to key \(EnvelopeError.printable(keyID, 16)), not to this device's key \(publicKey.keyID)"
            )
        }
        guard sealed.count >= Sodium.sealOverhead else {
            throw EnvelopeError(
                .truncated,
                "the sealed box is \(sealed.count) bytes, shorter than its \(Sodium.sealOverhead)-byte overhead")
        }
        let opened: [UInt8]?
        do { opened = try Sodium.open(sealed, publicKey: publicKey.bytes, secretKey: secretKey.bytes) } catch {
            throw EnvelopeError(.authenticationFailed, error.description)
        }
        guard let opened else {
            throw EnvelopeError(
                .authenticationFailed,
                "the sealed box does not authenticate (tampered, truncated or sealed to another key)")
        }
        return opened
    }
}

/// Why an envelope could not be opened. Never carries plaintext or key bytes.
public struct EnvelopeError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of failure; its raw value is the machine-readable reason.
    public enum Code: String, Sendable {
        case malformed = "envelope-malformed"
        case unsupportedVersion = "envelope-unsupported-version"
        case unsupportedAlgorithm = "envelope-unsupported-algorithm"
        case notBase64 = "envelope-not-base64"
        case wrongKey = "envelope-wrong-key"
        case truncated = "envelope-truncated"
        case authenticationFailed = "envelope-authentication-failed"
        /// An `nse3` envelope with no share for this device's keys (``MultiEnvelope``).
        case notRecipient = "envelope-not-recipient"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// A field of the envelope as an error may name it: at most `limit` characters, anything but printable ASCII
    /// shown as `?`, so that a sender cannot put a line break or a terminal escape into a reason.
    static func printable(_ field: some StringProtocol, _ limit: Int) -> String {
        String(
            String.UnicodeScalarView(
                field.unicodeScalars.prefix(limit).map { $0.value >= 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks. Works on scalars, not characters: Swift
    /// reads CR LF as one `Character`, equal to neither "\r" nor "\n", so a CRLF-ended line would keep its ending.
    func trimmingASCIIWhitespace() -> String {
        let text = String(self)
        let scalars = text.unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[first...last])
    }
}
