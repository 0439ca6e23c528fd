import NSECrypto
import NSEDevice
import NSEPayload

/// Opens a sealed envelope with the device's key and turns its plaintext into content: a message is rewritten, a
/// call offer escalated to CallKit; anything that fails falls back naming why (never quoting the content).
struct EnvelopeOpener: Sendable {
    var device: Device
    var rewriter: Rewriter
    var escalation: CallEscalation

    /// `source` names where the envelope came from in the result (`enc` for the payload, `sip` for a fetch).
    func open(_ text: String, source: String) -> DeliveredContent {
        let secretKey: SecretKey
        do { secretKey = try device.secretKey() } catch {
            return rewriter.fallback(reason: "key-unavailable: \(error.description)")
        }
        let plaintext: Plaintext
        do {
            let envelope = try Envelope(text: text)
            var bytes = try envelope.open(with: secretKey)
            defer { for index in bytes.indices { bytes[index] = 0 } }
            plaintext = try Plaintext(bytes)
        } catch let error as EnvelopeError {
            return rewriter.fallback(reason: error.description)
        } catch let error as PlaintextError {
            return rewriter.fallback(reason: error.description)
        } catch {
            return rewriter.fallback(reason: "envelope-error: \(error)")
        }
        switch plaintext {
        case .message(let message):
            return rewriter.rewrite(message, source: source)
        case .call(let call):
            return escalation.escalate(call, source: source)
        }
    }
}
