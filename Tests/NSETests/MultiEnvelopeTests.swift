import NSECrypto
import Testing

/// The envelope for several devices (`nse3`): one content, a share per device key, the sender's signature over the
/// recipient list and the plaintext; every malformed input a one-line error, never a crash.
@Suite struct MultiEnvelopeTests {
    let devices: [KeyPair]
    let signer: SigningSecretKey
    let plaintext = Array(#"{"type":"message","from":"sip:alice@example.org","text":"hi all"}"#.utf8)

    init() throws {
        devices = try (0..<3).map { _ in try KeyPair.generate() }
        signer = try SigningSecretKey.generate()
    }

    @Test func eachDeviceOpensItsOwnShareAndTheSignatureCoversTheRecipients() throws {
        let envelope = try MultiEnvelope.seal(plaintext, signedBy: signer, to: devices.map(\.publicKey))
        #expect(envelope.keyIDs == devices.map(\.publicKey.keyID))
        let text = envelope.text
        #expect(text.hasPrefix("nse3.xchacha20poly1305-sealedbox-ed25519."))
        #expect(Envelope.hasFormatTag(text) && Envelope.isCarried(by: text))
        let parsed = try MultiEnvelope(text: text + "\r\n")
        #expect(parsed == envelope)
        for device in devices {
            let opened = try parsed.open(with: device.secretKey, keyID: device.publicKey.keyID)
            #expect(opened.plaintext == plaintext)
            #expect(try signer.publicKey().verifies(opened.signature, of: opened.signedMessage))
            // Signed: the header (tag, algorithm, recipient list), then the plaintext.
            let header = String(text[...text.lastIndex(of: ".")!])
            #expect(opened.signedMessage == Array(header.utf8) + plaintext)
        }
        // A device's key cannot open another's share.
        #expect(throws: EnvelopeError.self) {
            try parsed.open(with: devices[0].secretKey, keyID: devices[1].publicKey.keyID)
        }
    }

    @Test func aDeviceNotAmongTheRecipientsIsToldSo() throws {
        let envelope = try MultiEnvelope.seal(
            plaintext, signedBy: signer, to: [devices[0].publicKey, devices[1].publicKey])
        let late = devices[2]
        do {
            _ = try envelope.open(with: late.secretKey, keyID: late.publicKey.keyID)
            Issue.record("a device that is not a recipient opened the envelope")
        } catch {
            #expect(error.code == .notRecipient)
            #expect(error.description.hasPrefix("envelope-not-recipient: the envelope is sealed to 2 device key(s)"))
        }
    }

    @Test func sizeAMultipleOfEightyEightBytesPerDevice() throws {
        let one = try MultiEnvelope.seal(plaintext, signedBy: signer, to: [devices[0].publicKey])
        let three = try MultiEnvelope.seal(plaintext, signedBy: signer, to: devices.map(\.publicKey))
        #expect(MultiEnvelope.entryBytes == 88)
        // Two more devices: 176 more bytes, as base64url (4 characters per 3 bytes).
        #expect(three.text.utf8.count - one.text.utf8.count == (3 * 88 * 4 + 2) / 3 - (88 * 4 + 2) / 3)
    }

    @Test func tamperingWithTheRecipientListOrContentFailsToAuthenticate() throws {
        let envelope = try MultiEnvelope.seal(plaintext, signedBy: signer, to: devices.map(\.publicKey))
        // Dropping a recipient: the list is the AEAD's associated data.
        var dropped = envelope
        dropped.recipients.removeLast()
        #expect(throws: EnvelopeError.self) {
            try dropped.open(with: devices[0].secretKey, keyID: devices[0].publicKey.keyID)
        }
        var flipped = envelope
        flipped.content[flipped.content.count - 1] ^= 1
        do {
            _ = try flipped.open(with: devices[0].secretKey, keyID: devices[0].publicKey.keyID)
            Issue.record("a tampered content opened")
        } catch {
            #expect(error.code == .authenticationFailed)
        }
    }

    @Test func boundsAreCheckedBeforeDecoding() throws {
        #expect(throws: CryptoError.self) { try MultiEnvelope.seal(plaintext, signedBy: signer, to: []) }
        #expect(throws: CryptoError.self) {
            try MultiEnvelope.seal(plaintext, signedBy: signer, to: [devices[0].publicKey, devices[0].publicKey])
        }
        let many = try (0...MultiEnvelope.maxRecipients).map { _ in try KeyPair.generate().publicKey }
        #expect(throws: CryptoError.self) { try MultiEnvelope.seal(plaintext, signedBy: signer, to: many) }
        let most = try MultiEnvelope.seal(
            plaintext, signedBy: signer, to: Array(many.prefix(MultiEnvelope.maxRecipients)))
        #expect(try MultiEnvelope(text: most.text).recipients.count == MultiEnvelope.maxRecipients)

        let prefix = "nse3.xchacha20poly1305-sealedbox-ed25519."
        let cases: [(String, EnvelopeError.Code, String)] = [
            ("nse3", .malformed, "4 dot-separated fields"),
            ("nse3.other.AAAA.AAAA", .unsupportedAlgorithm, "not supported"),
            (prefix + ".AAAA", .malformed, "names no recipient"),
            (prefix + "!!!!.AAAA", .notBase64, "recipient list"),
            (prefix + "AAAA.AAAA", .truncated, "88-byte entries"),
            (prefix + String(repeating: "A", count: 40_000) + ".AAAA", .malformed, "more than 256 recipients"),
            ("nse3." + String(repeating: "A", count: MultiEnvelope.maxTextBytes), .malformed, "more than an nse3"),
        ]
        for (text, code, words) in cases {
            do {
                _ = try MultiEnvelope(text: text)
                Issue.record("\(text.prefix(60)) parsed")
            } catch {
                #expect(error.code == code, "\(error)")
                #expect(error.description.contains(words), "\(error)")
                #expect(!error.description.contains("\n"))
            }
        }
        // Two entries for one key, and a content too short for its nonce, tag and signature.
        let entry = Base64.decodeURLSafe(String(most.text.split(separator: ".")[2]))!.prefix(88)
        let doubled = prefix + Base64.encodeURLSafe(Array(entry + entry)) + "." + Base64.encodeURLSafe([1, 2, 3])
        #expect(throws: EnvelopeError(.malformed, "the recipient list names key \(most.keyIDs[0]) twice")) {
            try MultiEnvelope(text: doubled)
        }
        let short = prefix + Base64.encodeURLSafe(Array(entry)) + "." + Base64.encodeURLSafe([1, 2, 3])
        #expect(throws: EnvelopeError.self) { try MultiEnvelope(text: short) }
    }
}
