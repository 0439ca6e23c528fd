import Crypto
import Foundation
import NSEAPNs
import NSECrypto
import Testing

/// `hpke1` envelopes (`nse seal --hpke`), opened as an extension opens them with CryptoKit: swift-crypto's
/// `HPKE.Recipient` with the device's own key (libsodium made it).
@Suite struct HPKEEnvelopeTests {
    let plaintext = Array(#"{"type":"message","from":"sip:alice@example.org","text":"Lunch at 1?"}"#.utf8)

    /// The device's libsodium secret key as CryptoKit reads it: the same 32 bytes.
    func privateKey(_ keys: KeyPair) throws -> Curve25519.KeyAgreement.PrivateKey {
        try Curve25519.KeyAgreement.PrivateKey(
            rawRepresentation: #require(Base64.decode(keys.secretKey.exportBase64())))
    }

    /// What the example extension does: parse, then `HPKE.Recipient` and `open(_:authenticating:)`.
    func open(
        _ text: String, with key: Curve25519.KeyAgreement.PrivateKey, info: String = HPKEEnvelope.defaultInfo,
        additionalData: [UInt8] = HPKEEnvelope.additionalData
    ) throws -> [UInt8] {
        let envelope = try HPKEEnvelope(text: text)
        var recipient = try HPKE.Recipient(
            privateKey: key, ciphersuite: .Curve25519_SHA256_ChachaPoly, info: Data(info.utf8),
            encapsulatedKey: Data(envelope.encapsulatedKey))
        return Array(try recipient.open(envelope.ciphertext, authenticating: additionalData))
    }

    @Test func sealsForCryptoKitWithTheDeviceKey() throws {
        let keys = try KeyPair.generate()
        let key = try privateKey(keys)
        // One key pair: libsodium's crypto_box public key is CryptoKit's X25519 public key of the same secret.
        #expect(Array(key.publicKey.rawRepresentation) == keys.publicKey.bytes)
        let text = try HPKEEnvelope.seal(plaintext, to: keys.publicKey).text
        #expect(text.hasPrefix("hpke1."))
        #expect(text.split(separator: ".").count == 3)
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) })
        #expect(try open(text, with: key) == plaintext)
        // Ciphertext: the plaintext and Poly1305's 16-byte tag.
        #expect(try HPKEEnvelope(text: text).ciphertext.count == plaintext.count + 16)
    }

    @Test func eachSealHasItsOwnEphemeralKey() throws {
        let keys = try KeyPair.generate()
        let first = try HPKEEnvelope.seal(plaintext, to: keys.publicKey)
        let second = try HPKEEnvelope.seal(plaintext, to: keys.publicKey)
        #expect(first.encapsulatedKey != second.encapsulatedKey)
        #expect(first.ciphertext != second.ciphertext)
    }

    @Test func theInfoStringBindsTheCiphertext() throws {
        let keys = try KeyPair.generate()
        let key = try privateKey(keys)
        let text = try HPKEEnvelope.seal(plaintext, to: keys.publicKey, info: "org.example.app/messages").text
        #expect(try open(text, with: key, info: "org.example.app/messages") == plaintext)
        #expect(throws: (any Error).self) { try open(text, with: key) }
        // And the AAD is the format tag: the same ciphertext under another tag does not open.
        #expect(throws: (any Error).self) {
            try open(text, with: key, info: "org.example.app/messages", additionalData: Array("hpke2".utf8))
        }
    }

    @Test func anotherKeyCannotOpen() throws {
        let bob = try KeyPair.generate()
        let eve = try KeyPair.generate()
        let text = try HPKEEnvelope.seal(plaintext, to: eve.publicKey).text
        #expect(throws: (any Error).self) { try open(text, with: privateKey(bob)) }
        #expect(try open(text, with: privateKey(eve)) == plaintext)
    }

    @Test(arguments: ["ciphertext", "tag", "encapsulated key"])
    func aTamperedEnvelopeDoesNotOpen(part: String) throws {
        let keys = try KeyPair.generate()
        var envelope = try HPKEEnvelope.seal(plaintext, to: keys.publicKey)
        switch part {
        case "ciphertext": envelope.ciphertext[3] ^= 0x01
        case "tag": envelope.ciphertext[envelope.ciphertext.count - 1] ^= 0x80
        default: envelope.encapsulatedKey[7] ^= 0x10
        }
        #expect(throws: (any Error).self) { try open(envelope.text, with: privateKey(keys)) }
        // Cut short by a byte: no longer authenticates either.
        var cut = try HPKEEnvelope.seal(plaintext, to: keys.publicKey)
        cut.ciphertext.removeLast()
        #expect(throws: (any Error).self) { try open(cut.text, with: privateKey(keys)) }
    }

    @Test(arguments: [
        ("nse1.x25519-sealedbox.AAAAAAAAAAA.AAAA", EnvelopeError.Code.unsupportedVersion),
        ("hpke2.AAAA.AAAA", .unsupportedVersion),
        ("hpke1.AAAA", .malformed),
        ("hpke1.AAAA.AAAA.AAAA", .malformed),
        ("hpke1.not base64!.AAAA", .notBase64),
        ("hpke1.AAAA.AAAAAAAAAAAAAAAAAAAAAA", .truncated),
    ])
    func malformedTextIsNamed(text: String, code: EnvelopeError.Code) {
        #expect {
            try HPKEEnvelope(text: text)
        } throws: { error in
            (error as? EnvelopeError)?.code == code
        }
    }

    @Test(arguments: [
        // 0 and 1 (the points of order 1 and 4), and one of the two points of order 8: every X25519 key's shared
        // secret with them is zero, so a box sealed to them opens for anyone. RFC 9180 makes that an error;
        // swift-crypto would seal, so the envelope checks first (crypto_box_seal, nse1's, refuses them too).
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
    ])
    func aPointOfSmallOrderIsRefused(hex: String) throws {
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset in
            UInt8(hex.dropFirst(offset).prefix(2), radix: 16)!
        }
        let key = try PublicKey(bytes: bytes)
        #expect(throws: NSECrypto.CryptoError.self) { try HPKEEnvelope.seal(plaintext, to: key) }
        #expect(throws: NSECrypto.CryptoError.self) { try Envelope.seal(plaintext, to: key) }
    }
}
