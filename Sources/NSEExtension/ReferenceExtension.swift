import NSEDevice
import NSEJSON
import NSEPayload
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
        switch plan(request, channel: channel) {
        case .deliver(let content):
            channel.send(.content(content))
            // Stay until the host closes stdin, as the protocol asks, so the host can measure this process.
            while (try? channel.next()) != nil {}
        case .fetch(let fetch, let callID):
            // From here on one thread reads the host (the fetch hears the expiry notice from it); this one waits.
            let host = HostListener(channel: channel)
            let fetched = BlockingWait.run { await fetch.with(host: host).run(callID: callID, request: request) }
            // The message is shown once the host says it keeps the content (`content-accepted`: a recording host
            // has it on disk). A process killed before that, or a host gone before it could keep it (its server
            // crashed: it runs the push again when it restarts), leaves the message claimed in the App Group store,
            // where it is held again once this process is gone.
            if host.send(.content(fetched.content)), host.waitForAcceptance() { fetched.markShown() }
            host.waitUntilClosed()
        }
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
                Rewriter(payload: payload, strings: .linphoneDefaults).fallback(
                    reason: "container-unavailable: \(error.description)"))
        }
        let rewriter = Rewriter(payload: payload, strings: device.strings().table)
        if let envelope = payload.envelope {
            let escalation = CallEscalation(device: device, rewriter: rewriter, channel: channel, request: request)
            return .deliver(
                EnvelopeOpener(device: device, rewriter: rewriter, escalation: escalation).open(envelope, source: "enc")
            )
        }
        if let room = payload.chatRoomAddress {
            return .deliver(rewriter.chatRoomInvitation(room: room, subject: nil))
        }
        if let callID = payload.callID {
            return .fetch(SIPFetch(device: device, rewriter: rewriter), callID: callID)
        }
        return .deliver(rewriter.fallback(reason: "no-content: the payload has neither \"enc\" nor a Call-ID to fetch"))
    }
}
