public import Logging
public import NSEDevice
import NSEJSON
public import NSEPayload
import NSESystem

/// nse's reference Notification Service Extension: opens sealed content (in the payload, or in the SIP MESSAGE
/// fetched by Call-ID) and rewrites the notification, or falls back to the app's localized `loc-key` text.
public struct ReferenceExtension: Sendable {
    /// The process's logger, made by `nse-extension`; the SIP fetch logs to it.
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    /// Serves requests over the protocol on stdin/stdout (`input`, `output`) until the host closes stdin; returns the
    /// process exit status.
    ///
    /// It says `hello` first (version 2: it serves several requests), so a host that keeps extension processes warm
    /// (`--extension-process warm`) sends it the next push's request after its `ready`; a host that does not closes
    /// its stdin after the content, and it exits.
    ///
    /// Synchronous on purpose: an async `main` ends the main thread with `pthread_exit`, whose forced unwind makes
    /// a static executable sort every unwind entry it has (~20 ms here). Only the SIP fetch runs async, on the
    /// process's event-loop thread, while the main thread waits.
    public func main(input: Int32 = 0, output: Int32 = 1) -> Int32 {
        let channel = ExtensionChannel(input: input, output: output)
        channel.send(.hello(ExtensionHello(servesMany: true)))
        // The host is read on this thread only, also while it waits for a fetch (`HostLink`): the common paths start
        // no thread, and a fetch hears the expiry notice the moment it comes.
        let host = HostLink(channel: channel)
        var served = 0
        while true {
            let message: HostMessage?
            do { message = try host.next(timeoutMilliseconds: -1) } catch {
                StandardStreams.writeError("nse-extension: \(error.description)\n")
                return 70
            }
            guard let message else {
                if served > 0 { return 0 }
                StandardStreams.writeError("nse-extension: the host closed the pipe before sending a request\n")
                return 70
            }
            // Anything but a request between two requests (a late answer to an earlier one) has nobody to go to.
            guard case .request(let request) = message else { continue }
            served += 1
            switch plan(request, host: host) {
            case .deliver(let content):
                if host.send(.content(content)) { _ = host.waitForAcceptance() }
            case .attach(let attachments, let content, let device):
                let delivered = AttachmentStep(device: device, request: request, logger: logger).attach(
                    attachments, to: content, host: host)
                if host.send(.content(delivered)) { _ = host.waitForAcceptance() }
            case .joinRoom(let room, let device, let rewriter):
                let content = RoomFetch(device: device, rewriter: rewriter, host: host).fetch(
                    room: room, request: request, logger: logger)
                if host.send(.content(content)) { _ = host.waitForAcceptance() }
            case .fetch(let callID, let device, let rewriter):
                var fetched = SIPFetch(device: device, rewriter: rewriter, host: host).fetch(
                    callID: callID, request: request, logger: logger)
                if !fetched.attachments.isEmpty {
                    fetched.content = AttachmentStep(device: device, request: request, logger: logger).attach(
                        fetched.attachments, to: fetched.content, host: host)
                }
                // The message is shown once the host says it keeps the content (`content-accepted`: a recording host
                // has it on disk). A process killed before that, or a host gone before it could keep it (its server
                // crashed: it runs the push again when it restarts), leaves the message claimed in the App Group
                // store, where it is held again once this process is gone.
                if host.send(.content(fetched.content)), host.waitForAcceptance() { fetched.markShown() }
            }
            // This instance is gone; the host sends the next request or closes stdin.
            host.send(.ready)
        }
    }

    /// What to do with a request: content at once, or a fetch over the network first.
    public enum Plan: Sendable {
        case deliver(DeliveredContent)
        /// Fetch the message with `callID` (``SIPFetch``), with the device and the rewriter the request opened.
        case fetch(callID: String, device: Device, rewriter: Rewriter)
        /// Join the chat room a group-chat invitation names (``RoomFetch``), then show the invitation.
        case joinRoom(String, device: Device, rewriter: Rewriter)
        /// Fetch the files the decrypted message names, then deliver `content` with them (``AttachmentStep``).
        case attach([Plaintext.Attachment], content: DeliveredContent, device: Device)
    }

    /// Decides the content for one request (`didReceive(_:withContentHandler:)`); everything but the SIP fetch is
    /// synchronous, so the common paths start no threads.
    func plan(_ request: ServiceRequest, host: (any HostConnection)? = nil) -> Plan {
        let payload = Payload(root: request.payload)
        let device: Device
        do { device = try Device.cached(at: request.container) } catch {
            return .deliver(
                Rewriter(payload: payload, strings: .linphoneDefaults).fallback(
                    reason: ReasonCode.containerUnavailable.reason("\(error.description)")))
        }
        let rewriter = Rewriter(payload: payload, strings: device.strings().table)
        if let envelope = payload.envelope {
            let escalation = CallEscalation(device: device, rewriter: rewriter, channel: host, request: request)
            let opened = EnvelopeOpener(device: device, rewriter: rewriter, escalation: escalation).opened(
                envelope, source: "enc")
            if !opened.attachments.isEmpty {
                return .attach(opened.attachments, content: opened.content, device: device)
            }
            return .deliver(opened.content)
        }
        if let room = payload.chatRoomAddress {
            guard device.config.sip != nil else {
                return .deliver(rewriter.chatRoomInvitation(room: room, subject: nil))
            }
            return .joinRoom(room, device: device, rewriter: rewriter)
        }
        if let callID = payload.callID {
            return .fetch(callID: callID, device: device, rewriter: rewriter)
        }
        return .deliver(
            rewriter.fallback(
                reason: ReasonCode.noContent.reason("the payload has neither \"enc\" nor a Call-ID to fetch")))
    }
}
