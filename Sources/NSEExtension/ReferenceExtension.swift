public import NSEJSON
public import NSEPayload
import NSECrypto
import NSEDevice
import NSESystem

/// nse's reference Notification Service Extension: opens sealed content (in the payload, or in the SIP MESSAGE
/// fetched by Call-ID) and rewrites the notification, or falls back to the app's localized `loc-key` text.
public struct ReferenceExtension: Sendable {
    public init() {}

    /// Runs one request over the protocol on stdin/stdout; returns the process exit status.
    ///
    /// Synchronous on purpose: an async `main` ends the main thread with `pthread_exit`, whose forced unwind makes
    /// a static executable sort every unwind entry it has (~20 ms here). Only the SIP fetch runs async, on the
    /// cooperative pool, while the main thread waits.
    public func main() -> Int32 {
        let channel = ExtensionChannel()
        let request: ServiceRequest
        do {
            guard case .request(let received)? = try channel.next() else {
                StandardStreams.writeError("nse-extension: the host closed the pipe before sending a request\n")
                return 70
            }
            request = received
        } catch {
            StandardStreams.writeError("nse-extension: \(error.description)\n")
            return 70
        }
        let content: DeliveredContent
        switch plan(request, channel: channel) {
        case .deliver(let ready):
            content = ready
        case .fetch(let fetch, let callID):
            content = BlockingWait.run { await fetch.with(channel: channel).run(callID: callID, request: request) }
        }
        channel.send(.content(content))
        // Stay until the host closes stdin, as the protocol asks, so the host can measure this process.
        while (try? channel.next()) != nil {}
        return 0
    }

    /// What to do with a request: content at once, or a fetch over the network first.
    public enum Plan: Sendable {
        case deliver(DeliveredContent)
        case fetch(SIPFetch, callID: String)
    }

    /// Decides the content for one request (`didReceive(_:withContentHandler:)`); everything but the SIP fetch is
    /// synchronous, so the common paths start no threads.
    public func plan(_ request: ServiceRequest, channel: ExtensionChannel? = nil) -> Plan {
        let payload = Payload(root: request.payload)
        let device: Device
        do { device = try Device.open(at: request.container) } catch {
            return .deliver(
                Rewriter(payload: payload, strings: .linphoneDefaults).fallback(reason: "container-unavailable: \(error.description)"))
        }
        let rewriter = Rewriter(payload: payload, strings: device.strings().table)
        if let envelope = payload.envelope {
            let escalation = CallEscalation(device: device, rewriter: rewriter, channel: channel, request: request)
            return .deliver(ReferenceExtension.openEnvelope(envelope, device: device, rewriter: rewriter, source: "enc", escalation: escalation))
        }
        if let room = payload.chatRoomAddress {
            return .deliver(rewriter.chatRoomInvitation(room: room, subject: nil))
        }
        if let callID = payload.callID {
            return .fetch(SIPFetch(device: device, rewriter: rewriter, channel: nil), callID: callID)
        }
        return .deliver(rewriter.fallback(reason: "no-content: the payload has neither \"enc\" nor a Call-ID to fetch"))
    }

    /// The content for one request, fetching when needed (for callers that are already async).
    public func process(_ request: ServiceRequest, channel: ExtensionChannel? = nil) async -> DeliveredContent {
        switch plan(request, channel: channel) {
        case .deliver(let content): return content
        case .fetch(let fetch, let callID): return await fetch.with(channel: channel).run(callID: callID, request: request)
        }
    }

    /// Opens an envelope with the device's key and rewrites, or falls back naming why.
    static func openEnvelope(
        _ text: String, device: Device, rewriter: Rewriter, source: String, escalation: CallEscalation
    ) -> DeliveredContent {
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
