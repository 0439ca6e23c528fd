import NSECrypto
import NSEPayload

/// The envelope: its text form parsed, opened with a fixed test key pair, and its plaintext read.
enum EnvelopeTarget {
    /// The fixed test key pair's secret key: bytes 1…32. Seeds in `fixtures/fuzz/envelope/` are sealed to its public
    /// key (`FuzzKeys.publicKeyBase64`), so the fuzzer starts from envelopes that open.
    static let secretKey: SecretKey = {
        do { return try SecretKey(bytes: Array(1...32)) } catch { fatalError("the fixed fuzz key is 32 bytes") }
    }()
    static let publicKey: PublicKey = {
        do { return try secretKey.publicKey() } catch {
            fatalError("libsodium cannot derive the fixed fuzz public key")
        }
    }()

    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        try textForm(String(decoding: bytes, as: UTF8.self))
        // The same bytes as a sealed box addressed to the fixed key: only a real seal to it may open.
        try open(Envelope(keyID: publicKey.keyID, sealed: bytes))
        // Sealing any plaintext and opening it gives the plaintext back.
        if bytes.count <= 4096 {
            do {
                let sealed = try Envelope.seal(bytes, to: publicKey)
                guard try sealed.open(with: secretKey) == bytes else {
                    throw FuzzFinding(.envelope, "a sealed plaintext opens to different bytes")
                }
                guard try Envelope(text: sealed.text) == sealed else {
                    throw FuzzFinding(.envelope, "a sealed envelope's text form parses to a different envelope")
                }
            } catch let finding as FuzzFinding {
                throw finding
            } catch {
                throw FuzzFinding(.envelope, "sealing to the fixed key and opening failed (\(error))")
            }
        }
    }

    static func textForm(_ text: String) throws(FuzzFinding) {
        let envelope: Envelope
        do { envelope = try Envelope(text: text) } catch {
            try FuzzCheck.oneLine(error.description, .envelope, "an envelope parse error")
            return
        }
        // The text form re-parses to the same envelope, with or without the line ending a file or a body adds.
        for form in [envelope.text, envelope.text + "\n", envelope.text + "\r\n", " " + envelope.text + " "] {
            let again: Envelope
            do { again = try Envelope(text: form) } catch {
                throw FuzzFinding(.envelope, "a parsed envelope's text form does not parse (\(error.code.rawValue))")
            }
            guard again == envelope else {
                throw FuzzFinding(.envelope, "a parsed envelope's text form parses to a different envelope")
            }
        }
        try open(envelope)
    }

    static func open(_ envelope: Envelope) throws(FuzzFinding) {
        let opened: [UInt8]
        do { opened = try envelope.open(with: secretKey) } catch {
            try FuzzCheck.oneLine(error.description, .envelope, "an envelope open error")
            return
        }
        do { _ = try Plaintext(opened) } catch {
            try FuzzCheck.oneLine(error.description, .envelope, "a plaintext error")
        }
    }
}
