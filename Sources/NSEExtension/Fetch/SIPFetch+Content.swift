import NSECrypto
import NSEDevice
import NSEJSON
public import NSEPayload
import NSESystem

extension SIPFetch {
    /// What a fetch delivers: the content, and the store mark to make once the host has it.
    public struct Fetched: Sendable {
        public var content: DeliveredContent
        /// The files the fetched message names, fetched next (``AttachmentStep``) before the content is handed over.
        public var attachments: [Plaintext.Attachment] = []
        /// The store that holds (or has claimed) the shown message, when the content shows one.
        let shown: MessageStore?
        let callID: String

        /// Marks the shown message shown in the App Group store; called once its content is written to the host.
        /// Until then the message stays in the store (held, or claimed by this process): an extension killed before
        /// the host has the content leaves it for the next push instead of losing it. A mark that fails (full
        /// disk) leaves it there too, and a later push for the same Call-ID shows it once more.
        public func markShown() {
            try? shown?.markShown(callID: callID)
        }
    }

    /// The content for how the fetch ended, with the fetch's diagnostics in its `info`. On the thread that serves
    /// the request, never the event loop: a call offer waits here for the host's answer to its report.
    func makeFetched(_ end: FetchEnd, callID: String, request: ServiceRequest) -> Fetched {
        var report = end.report
        var shown: MessageStore?
        var content: DeliveredContent
        var attachments: [Plaintext.Attachment] = []
        switch (end.outcome, end.message) {
        case (.found, let message?):
            // Shown once the host has it (Fetched.markShown): then the copy kept on arrival (or claimed from the
            // store), and any copy another extension process kept from the same flush, is not shown again.
            (content, attachments) = self.content(for: message, request: request)
            shown = end.store
        case (.found, nil), (.notFound, _):
            content = rewriter.fallback(
                reason: ReasonCode.notFound.reason(
                    "no MESSAGE with Call-ID \(callID) arrived within \(Int(waitMilliseconds(for: request))) ms"))
        case (.shownElsewhere, _):
            content = alreadyShown(callID, by: end.shownBy, report: &report)
        case (.expired, _):
            content = rewriter.fallback(reason: ReasonCode.timeWillExpire.reason("Call-ID \(callID) had not arrived"))
        case (.registerFailed(let failure), _):
            report.error = failure
            content = rewriter.fallback(reason: failure)
        case (.coreStopped, _):
            report.sharedCore = "executor-stopped"
            content = DeliveredContent(
                content: [:],
                reason:
                    ReasonCode.coreStopped.reason(
                        "the app came to the foreground and took the shared core; it receives the message itself"))
        case (.mainCoreRunning, _):
            content = DeliveredContent(
                content: [:],
                reason:
                    ReasonCode.mainCoreRunning.reason("the app is in the foreground and receives the message itself"))
        case (.unavailable(let reason), _):
            content = rewriter.fallback(reason: reason)
        }
        var info = content.info ?? JSONObject()
        for (key, value) in report.json(total: SystemClock.millisecondsSince(end.start)) { info[key] = value }
        content.info = info
        return Fetched(content: content, attachments: attachments, shown: shown, callID: callID)
    }

    /// The same push again (APNs may deliver twice, a server may push twice), or a message the app in the foreground
    /// received itself: shown, or being shown by another extension process (`viewer` nil); it is not fetched again
    /// and not shown twice. An app that may filter shows nothing; one that may not shows its loc-key text.
    func alreadyShown(_ callID: String, by viewer: MessageStore.Viewer?, report: inout FetchReport) -> DeliveredContent
    {
        report.alreadyShown = true
        let by: String
        switch viewer {
        case .app?: by = "was shown by the app in the foreground"
        case .notification?: by = "was shown by an earlier notification"
        case nil: by = "is being shown by another notification"
        }
        let reason = ReasonCode.alreadyShown.reason("the message with Call-ID \(callID) \(by)")
        return device.config.filtering
            ? DeliveredContent(content: [:], reason: reason) : rewriter.fallback(reason: reason)
    }

    /// Opens a received message: a sealed envelope (in CPIM or bare), or plain text shown as it is; with the files
    /// a sealed message names.
    func content(for received: ReceivedContent, request: ServiceRequest) -> (
        DeliveredContent, [Plaintext.Attachment]
    ) {
        let (type, body) = received.innerContent
        let text = String(decoding: body, as: UTF8.self)
        var content: DeliveredContent
        var attachments: [Plaintext.Attachment] = []
        if Envelope.hasFormatTag(text) || type == ReceivedContent.envelopeType {
            let escalation = CallEscalation(device: device, rewriter: rewriter, channel: host, request: request)
            let opened = EnvelopeOpener(device: device, rewriter: rewriter, escalation: escalation).opened(
                text, source: "sip")
            (content, attachments) = (opened.content, opened.attachments)
            if content.info == nil { content.info = [:] }
            content.info?["encrypted"] = true
        } else if type.hasPrefix("text/plain") {
            let sender = received.fromDisplayName ?? SIPAddressText.user(of: received.from)
            content = rewriter.plainText(from: received.from, title: sender, text: text)
            content.info = ["content_type": "message", "source": "sip", "encrypted": false]
        } else {
            content = rewriter.fallback(reason: ReasonCode.unsupportedContentType.reason("\(type.prefix(64))"))
        }
        // A message a chat room fanned out comes from the room: titled with its subject when the app has joined it.
        if !content.isFallback, content.info?["content_type"] == "message",
            let room = try? device.cachedAppGroup().rooms.room(received.from)
        {
            content = rewriter.inRoom(content, address: room.address, subject: room.subject)
            content.info?["chat_room"] = .string(room.address)
        }
        if var info = content.info {
            info["call_id"] = .string(received.callID)
            info["from"] = .string(received.from)
            content.info = info
        }
        return (content, attachments)
    }
}
