import NSECrypto
import Testing

@Suite struct EnvelopeTests {
    let plaintext = Array(#"{"type":"message","from":"sip:alice@example.org","text":"hi"}"#.utf8)

    @Test func sealsAndOpens() throws {
        let keys = try KeyPair.generate()
        let envelope = try Envelope.seal(plaintext, to: keys.publicKey)
        let text = envelope.text
        #expect(text.hasPrefix("nse1.x25519-sealedbox.\(keys.publicKey.keyID)."))
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) })
        let parsed = try Envelope(text: text)
        #expect(try parsed.open(with: keys.secretKey) == plaintext)
    }

    @Test func signedEnvelopesCarryAVerifiableSignature() throws {
        let keys = try KeyPair.generate()
        let alice = try SigningSecretKey.generate()
        let envelope = try Envelope.seal(plaintext, signedBy: alice, to: keys.publicKey)
        #expect(envelope.text.hasPrefix("nse2.x25519-sealedbox-ed25519.\(keys.publicKey.keyID)."))
        let parsed = try Envelope(text: envelope.text)
        #expect(parsed.format == .signed)
        let (signature, signed) = try Envelope.signedParts(try parsed.open(with: keys.secretKey))
        #expect(signed == plaintext && signature.count == 64)
        #expect(try alice.publicKey().verifies(signature, of: signed))
        // Another key, another text, a flipped signature bit: none verifies.
        #expect(try !SigningSecretKey.generate().publicKey().verifies(signature, of: signed))
        #expect(try !alice.publicKey().verifies(signature, of: signed + [0x20]))
        var flipped = signature
        flipped[0] ^= 1
        #expect(try !alice.publicKey().verifies(flipped, of: signed))
        // Too short to hold a signature.
        #expect(throws: EnvelopeError.self) { try Envelope.signedParts(Array(repeating: 0, count: 64)) }
        // The secret key never prints.
        #expect(alice.description == "SigningSecretKey(redacted)")
    }

    @Test func sealingTwiceGivesDifferentBoxes() throws {
        let keys = try KeyPair.generate()
        #expect(
            try Envelope.seal(plaintext, to: keys.publicKey).text != Envelope.seal(plaintext, to: keys.publicKey).text)
    }

    @Test func wrongKeyIsNamed() throws {
        let bob = try KeyPair.generate()
        let eve = try KeyPair.generate()
        let envelope = try Envelope.seal(plaintext, to: eve.publicKey)
        #expect(throws: EnvelopeError.self) { try envelope.open(with: bob.secretKey) }
        do { _ = try envelope.open(with: bob.secretKey) } catch { #expect(error.code == .wrongKey) }
    }

    @Test func wrongKeyWithForgedKeyIDFailsAuthentication() throws {
        let bob = try KeyPair.generate()
        let eve = try KeyPair.generate()
        var envelope = try Envelope.seal(plaintext, to: eve.publicKey)
        envelope.keyID = bob.publicKey.keyID
        do {
            _ = try envelope.open(with: bob.secretKey)
            Issue.record("opened")
        } catch {
            #expect(error.code == .authenticationFailed)
        }
    }

    @Test func tamperedBoxFailsAuthentication() throws {
        let keys = try KeyPair.generate()
        var envelope = try Envelope.seal(plaintext, to: keys.publicKey)
        envelope.sealed[envelope.sealed.count - 5] ^= 0x01
        do {
            _ = try envelope.open(with: keys.secretKey)
            Issue.record("opened")
        } catch {
            #expect(error.code == .authenticationFailed)
        }
    }

    @Test func truncatedBoxIsNamed() throws {
        let keys = try KeyPair.generate()
        var envelope = try Envelope.seal(plaintext, to: keys.publicKey)
        envelope.sealed = Array(envelope.sealed.prefix(20))
        do {
            _ = try envelope.open(with: keys.secretKey)
            Issue.record("opened")
        } catch {
            #expect(error.code == .truncated)
        }
    }

    @Test(arguments: [
        ("nse3.x25519-sealedbox.abc.AAAA", EnvelopeError.Code.unsupportedVersion),
        ("nse2.x25519-sealedbox.abc.AAAA", .unsupportedAlgorithm),
        ("nse1.x25519-sealedbox-ed25519.abc.AAAA", .unsupportedAlgorithm),
        ("nse1.rsa.abc.AAAA", .unsupportedAlgorithm),
        ("nse1.x25519-sealedbox.abc.not*base64!", .notBase64),
        ("nse1.x25519-sealedbox.AAAA", .malformed),
        ("hello", .malformed),
        ("", .malformed),
    ])
    func badTextIsNamed(text: String, code: EnvelopeError.Code) {
        do {
            _ = try Envelope(text: text)
            Issue.record("parsed \(text)")
        } catch { #expect(error.code == code) }
    }

    @Test func errorsNeverCarryKeyMaterial() throws {
        let keys = try KeyPair.generate()
        let secret = keys.secretKey.exportBase64()
        #expect(!"\(keys.secretKey)".contains(secret))
        let other = try KeyPair.generate()
        let envelope = try Envelope.seal(plaintext, to: other.publicKey)
        do { _ = try envelope.open(with: keys.secretKey) } catch {
            #expect(!error.description.contains(secret))
            #expect(!error.description.contains("alice"))
        }
    }

    @Test func publicKeyFromBase64() throws {
        let keys = try KeyPair.generate()
        #expect(try PublicKey(base64: keys.publicKey.base64) == keys.publicKey)
        #expect(try keys.secretKey.publicKey() == keys.publicKey)
        #expect(throws: CryptoError.self) { try PublicKey(base64: "AAAA") }
        #expect(throws: CryptoError.self) { try PublicKey(base64: "%%%") }
    }

    @Test func uuidsAreVersion4() throws {
        let uuid = try SecureRandom.uuid()
        #expect(uuid.count == 36)
        #expect(Array(uuid)[14] == "4")
        #expect(try SecureRandom.uuid() != uuid)
    }
}
