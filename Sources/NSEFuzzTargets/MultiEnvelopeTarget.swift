import NSECrypto
import NSEPayload

/// The envelope for several devices (`nse3`, ``MultiEnvelope``): its text form parsed (every size checked before it
/// is decoded) and opened with the fixed test key pair of ``EnvelopeTarget``; sealing any plaintext for that key and
/// another opens to it for each.
enum MultiEnvelopeTarget {
    /// A second recipient, so that every seal has a share that is not the fixed key's.
    static let other: PublicKey = {
        do { return try SecretKey(bytes: Array(33...64)).publicKey() } catch {
            fatalError("libsodium cannot derive the second fuzz public key")
        }
    }()
    static let signer: SigningSecretKey = {
        do { return try SigningSecretKey.generate() } catch { fatalError("libsodium cannot make a signing key") }
    }()

    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        try textForm(String(decoding: bytes, as: UTF8.self))
        guard bytes.count <= 4096 else { return }
        do {
            let sealed = try MultiEnvelope.seal(bytes, signedBy: signer, to: [other, EnvelopeTarget.publicKey])
            let opened = try sealed.open(with: EnvelopeTarget.secretKey, keyID: EnvelopeTarget.publicKey.keyID)
            guard opened.plaintext == bytes else {
                throw FuzzFinding(.envelopeMulti, "a sealed plaintext opens to different bytes")
            }
            guard try signer.publicKey().verifies(opened.signature, of: opened.signedMessage) else {
                throw FuzzFinding(.envelopeMulti, "a sealed envelope's signature does not verify")
            }
            guard try MultiEnvelope(text: sealed.text) == sealed else {
                throw FuzzFinding(.envelopeMulti, "a sealed envelope's text form parses to a different envelope")
            }
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            throw FuzzFinding(.envelopeMulti, "sealing to the fixed key and opening failed (\(error))")
        }
    }

    static func textForm(_ text: String) throws(FuzzFinding) {
        let envelope: MultiEnvelope
        do { envelope = try MultiEnvelope(text: text) } catch {
            try FuzzCheck.oneLine(error.description, .envelopeMulti, "an nse3 parse error")
            return
        }
        guard (1...MultiEnvelope.maxRecipients).contains(envelope.recipients.count) else {
            throw FuzzFinding(.envelopeMulti, "a parsed envelope has a recipient count out of bounds")
        }
        for form in [envelope.text, envelope.text + "\r\n", " " + envelope.text + " "] {
            guard (try? MultiEnvelope(text: form)) == envelope else {
                throw FuzzFinding(.envelopeMulti, "a parsed envelope's text form does not parse to itself")
            }
        }
        let opened: MultiEnvelope.Opened
        do { opened = try envelope.open(with: EnvelopeTarget.secretKey, keyID: EnvelopeTarget.publicKey.keyID) } catch {
            try FuzzCheck.oneLine(error.description, .envelopeMulti, "an nse3 open error")
            return
        }
        do { _ = try Plaintext(opened.plaintext) } catch {
            try FuzzCheck.oneLine(error.description, .envelopeMulti, "a plaintext error")
        }
    }
}
