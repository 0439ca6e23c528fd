import Logging
import NSEChat
import NSECrypto
public import NSEDevice
import NSEJSON
public import NSEPayload
import NSESIP
import NSESystem
import Synchronization

/// The Linphone path: the push carries only a Call-ID; register, let the server re-deliver the held MESSAGE,
/// pick the one with that Call-ID, keep every other one in the shared store for a later push.
public struct SIPFetch: Sendable {
    public var device: Device
    public var rewriter: Rewriter
    public var channel: ExtensionChannel?
    /// Stop waiting this long before the budget ends (liblinphone: 25 s of 30).
    public var fetchFraction: Double = 25.0 / 30.0
    /// After our message arrived, how long to keep draining a flush of others before leaving.
    public var quietMilliseconds: Int64 = 5
    /// Re-REGISTER this often while waiting, so messages held after our first REGISTER are flushed to us too.
    public var reregisterMilliseconds: Int64 = 2000

    public init(device: Device, rewriter: Rewriter, channel: ExtensionChannel?) {
        self.device = device
        self.rewriter = rewriter
        self.channel = channel
    }

    /// The same fetch, watching `channel` for the expiry notice.
    public func with(channel: ExtensionChannel?) -> SIPFetch {
        var copy = self
        copy.channel = channel
        return copy
    }

    /// Diagnostics copied into the result's `extension.info`.
    struct Report {
        var transport: String?
        var registerStatus: Int?
        var registerMilliseconds: Double?
        var registrations = 0
        var callIDsReceived: [String] = []
        var stored = 0
        var fromStore = false
        var foundMilliseconds: Double?
        var imdnStatus: Int?
        var imdn: String?
        var error: String?
        var storeError: String?

        func json(total: Double) -> JSONObject {
            var object: JSONObject = ["source": "sip", "from_store": .bool(fromStore)]
            object["transport"] = JSON.string(transport)
            object["register_status"] = JSON.int(registerStatus)
            object["registrations"] = .int(Int64(registrations))
            object["call_ids_received"] = .array(callIDsReceived.map(JSON.string))
            object["stored_for_later"] = .int(Int64(stored))
            var timings: JSONObject = ["total_ms": .double(Self.round(total))]
            if let registerMilliseconds { timings["register_ms"] = .double(Self.round(registerMilliseconds)) }
            if let foundMilliseconds { timings["message_ms"] = .double(Self.round(foundMilliseconds)) }
            object["sip_timings"] = .object(timings)
            if let imdn { object["imdn"] = .string(imdn) }
            if let imdnStatus { object["imdn_status"] = .int(Int64(imdnStatus)) }
            if let error { object["sip_error"] = .string(error) }
            if let storeError { object["store_error"] = .string(storeError) }
            return object
        }

        static func round(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
    }

    /// Fetches the message with `callID` and turns it into content.
    public func run(callID: String, request: ServiceRequest) async -> DeliveredContent {
        let start = Clock.monotonicNanoseconds()
        var report = Report()
        // The App Group store. When it cannot be opened the fetch still shows its own message, but refuses (500) the
        // others, so the server keeps them: a message is answered 200 only once it is durably kept.
        var opened: MessageStore?
        do {
            opened = try device.appGroup().messages
            try opened?.purge()
        } catch {
            report.storeError = error.description
        }
        let store = opened
        let state = FetchState()
        func finish(_ content: DeliveredContent) -> DeliveredContent {
            var content = content
            report.stored = state.stored.withLock { $0 }
            if report.storeError == nil { report.storeError = state.storeError.withLock { $0 } }
            var info = content.info ?? JSONObject()
            for (key, value) in report.json(total: Clock.millisecondsSince(start)) { info[key] = value }
            content.info = info
            return content
        }
        func takeFromStore() -> StoredMessage? {
            do { return try store?.take(callID: callID) } catch {
                report.storeError = report.storeError ?? error.description
                return nil
            }
        }
        if let stored = takeFromStore() {
            report.fromStore = true
            return finish(content(for: ReceivedContent(stored), request: request, report: &report))
        }
        guard let account = device.config.sip else {
            return finish(rewriter.fallback(
                reason: "fetch-unavailable: the payload names Call-ID \(callID) but the device has no SIP account to fetch it with"))
        }
        let password: String?
        let registration: SIPRegistration
        do {
            password = try device.sipPassword()
            registration = try AppRegistration.registration(for: device, account: account, password: password)
            report.transport = try SIPTransportKind(proxy: registration.proxy).rawValue
        } catch {
            return finish(rewriter.fallback(reason: "sip-account-invalid: \(error)"))
        }

        let budget = Double(request.budgetMilliseconds) * fetchFraction
        let deadline = start + UInt64(budget * 1_000_000)
        var configuration = AppRegistration.configuration(for: account)
        configuration.messageAcceptor = { [store] message in Self.accept(message, target: callID, store: store, state: state) }
        let agent = SIPUserAgent(configuration: configuration, logger: Logger(label: "nse.extension.sip"))
        let collector = Task {
            for await message in agent.messages { state.inbox.withLock { $0.append(message) } }
            state.collectorDone.withLock { $0 = true }
        }
        func startRegister() -> Task<Void, Never> {
            state.registerOutcome.withLock { $0.done = false }
            return Task {
                do {
                    let result = try await agent.register(registration)
                    state.registerOutcome.withLock { $0 = (result.statusCode, nil, true) }
                } catch {
                    state.registerOutcome.withLock { $0 = ($0.status, "\(error)", true) }
                }
            }
        }
        var registerTask = startRegister()
        report.registrations = 1
        var lastRegister = Clock.monotonicNanoseconds()
        var found: ReceivedContent?
        var foundAt: UInt64?
        var expired = false
        var failure: String?

        while true {
            let now = Clock.monotonicNanoseconds()
            for message in state.inbox.withLock({ let taken = $0; $0.removeAll(); return taken }) {
                report.callIDsReceived.append(message.callID)
                // Every other MESSAGE was stored by the acceptor before it was answered 200.
                if message.callID == callID, found == nil {
                    found = ReceivedContent(message)
                    foundAt = now
                    report.foundMilliseconds = Clock.millisecondsSince(start)
                }
            }
            let outcome = state.registerOutcome.withLock { $0 }
            if report.registerStatus == nil, let status = outcome.status {
                report.registerStatus = status
                report.registerMilliseconds = Clock.millisecondsSince(start)
            }
            if let foundAt {
                if now - foundAt >= UInt64(quietMilliseconds) * 1_000_000 || now >= deadline { break }
            } else {
                // Another process may have received ours and kept it; once ours is arriving here, it is ours.
                if !state.targetArrived.withLock({ $0 }), let stored = takeFromStore() {
                    report.fromStore = true
                    found = ReceivedContent(stored)
                    break
                }
                if outcome.done, let error = outcome.error {
                    failure = "sip-register-failed: \(error)"
                    break
                }
                if outcome.done, let status = outcome.status, !(200..<300).contains(status) {
                    failure = "sip-register-failed: the registrar answered \(status)"
                    break
                }
                if now >= deadline { break }
                if outcome.done, now - lastRegister >= UInt64(reregisterMilliseconds) * 1_000_000 {
                    registerTask = startRegister()
                    report.registrations += 1
                    lastRegister = now
                }
            }
            if let channel, case .timeWillExpire? = try? channel.next(timeoutMilliseconds: 0) {
                expired = true
                break
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        _ = registerTask
        // From here on, the target is no longer awaited: if it arrives now, it is kept like any other message.
        state.targetOpen.withLock { $0 = false }

        var content: DeliveredContent
        if let found {
            content = self.content(for: found, request: request, report: &report)
            if let notice = found.deliveryNotice(recipient: account.aor), Clock.monotonicNanoseconds() < deadline {
                report.imdn = "delivered"
                let remaining = Double(deadline - Clock.monotonicNanoseconds()) / 1e9
                report.imdnStatus = await sendNotice(notice, account: account, password: password, agent: agent, within: min(remaining, 2))
            }
        } else if expired {
            content = rewriter.fallback(reason: "time-will-expire: Call-ID \(callID) had not arrived")
        } else if let failure {
            report.error = failure
            content = rewriter.fallback(reason: failure)
        } else {
            content = rewriter.fallback(
                reason: "not-found: no MESSAGE with Call-ID \(callID) arrived within \(Int(budget)) ms")
        }
        // Every MESSAGE the user agent answered 200 OK to is already kept (the acceptor stores before answering).
        // Stop receiving and let the collector see the stream end, for the report's list of Call-IDs.
        await agent.close()
        let drained = Task {
            _ = await collector.value
        }
        let drainEnd = Clock.monotonicNanoseconds() + 500_000_000
        while Clock.monotonicNanoseconds() < drainEnd, !state.collectorDone.withLock({ $0 }) {
            try? await Task.sleep(for: .milliseconds(1))
        }
        drained.cancel()
        if found != nil, !report.fromStore {
            // Shown (its content goes to the host next): the copy kept on arrival, and any copy another extension
            // process kept from the same flush, must not be shown again.
            do { try store?.markShown(callID: callID) } catch { report.storeError = report.storeError ?? error.description }
        }
        for message in state.inbox.withLock({ let taken = $0; $0.removeAll(); return taken }) {
            report.callIDsReceived.append(message.callID)
            // The awaited message, accepted for this process to show, came too late to be shown: keep it for the
            // next push instead of losing it.
            if message.callID == callID, found == nil {
                do {
                    if try store?.keep(StoredMessage(ReceivedContent(message))) == .kept { state.stored.withLock { $0 += 1 } }
                } catch {
                    report.storeError = report.storeError ?? error.description
                }
            }
        }
        return finish(content)
    }

    /// The answer to an incoming MESSAGE, decided before it is sent: the awaited one is accepted (this process shows
    /// it); any other is accepted only once the App Group store has it, else refused with 500 so the server keeps it.
    static func accept(_ message: SIPReceivedMessage, target: String, store: MessageStore?, state: FetchState) -> SIPMessageAnswer {
        if message.callID == target, state.targetOpen.withLock({ $0 }) {
            // Kept as well until it is shown: an extension killed between the 200 and the content handler leaves it
            // held for the next push instead of losing it. If the store cannot keep it, this process still shows it.
            state.targetArrived.withLock { $0 = true }
            if let store {
                do { try store.keep(StoredMessage(ReceivedContent(message))) } catch {
                    state.storeError.withLock { $0 = $0 ?? error.description }
                }
            }
            return .accepted
        }
        guard let store else { return SIPMessageAnswer(statusCode: 500, reasonPhrase: "Message Not Stored") }
        do {
            if try store.keep(StoredMessage(ReceivedContent(message))) == .kept { state.stored.withLock { $0 += 1 } }
            return .accepted
        } catch {
            state.storeError.withLock { $0 = $0 ?? error.description }
            return SIPMessageAnswer(statusCode: 500, reasonPhrase: "Message Not Stored")
        }
    }

    /// Sends the IMDN, giving up after `seconds`; returns the final status, nil when none came.
    private func sendNotice(
        _ notice: (to: String, body: [UInt8]), account: SIPAccount, password: String?, agent: SIPUserAgent, within seconds: Double
    ) async -> Int? {
        guard let to = try? SIPURI(parsing: notice.to), let from = try? SIPURI(parsing: account.aor),
            let proxy = try? SIPURI(parsing: account.proxy)
        else { return nil }
        let state = FetchState()
        let sender = Task {
            let outgoing = SIPOutgoingMessage(to: to, from: from, proxy: proxy, contentType: "message/cpim", body: notice.body, password: password)
            if let sent = try? await agent.sendMessage(outgoing) { state.noticeStatus.withLock { $0 = sent.statusCode } }
        }
        let end = Clock.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while Clock.monotonicNanoseconds() < end, state.noticeStatus.withLock({ $0 }) == nil {
            try? await Task.sleep(for: .milliseconds(1))
        }
        sender.cancel()
        return state.noticeStatus.withLock { $0 }
    }

    /// Opens a received message: a sealed envelope (in CPIM or bare), or plain text shown as it is.
    func content(for received: ReceivedContent, request: ServiceRequest, report: inout Report) -> DeliveredContent {
        let (type, body) = received.innerContent
        let text = String(decoding: body, as: UTF8.self)
        var content: DeliveredContent
        if text.hasPrefix(Envelope.formatTag + ".") || type == ReceivedContent.envelopeType {
            let escalation = CallEscalation(device: device, rewriter: rewriter, channel: channel, request: request)
            content = ReferenceExtension.openEnvelope(text, device: device, rewriter: rewriter, source: "sip", escalation: escalation)
            if content.info == nil { content.info = [:] }
            content.info?["encrypted"] = true
        } else if type.hasPrefix("text/plain") {
            let sender = received.fromDisplayName ?? SIPAddressText.user(of: received.from)
            content = rewriter.plainText(from: received.from, title: sender, text: text)
            content.info = ["content_type": "message", "source": "sip", "encrypted": false]
        } else {
            content = rewriter.fallback(reason: "unsupported-content-type: \(type.prefix(64))")
        }
        if var info = content.info {
            info["call_id"] = .string(received.callID)
            info["from"] = .string(received.from)
            content.info = info
        }
        return content
    }
}

/// What the fetch's tasks share with its polling loop.
final class FetchState: Sendable {
    let inbox = Mutex<[SIPReceivedMessage]>([])
    let registerOutcome = Mutex<(status: Int?, error: String?, done: Bool)>((nil, nil, false))
    let noticeStatus = Mutex<Int?>(nil)
    let collectorDone = Mutex(false)
    /// Whether the awaited message would still be shown by this process (until the fetch decides).
    let targetOpen = Mutex(true)
    /// Whether the awaited message has been accepted from the network (it is on its way to the loop).
    let targetArrived = Mutex(false)
    /// Messages the acceptor newly kept in the App Group store.
    let stored = Mutex(0)
    let storeError = Mutex<String?>(nil)
}

/// A MESSAGE as the extension uses it, whether it came from the network or the shared store.
struct ReceivedContent {
    /// The content type nse's sender gives a bare envelope.
    static let envelopeType = "application/vnd.nse.envelope"

    var callID: String
    var from: String
    var fromDisplayName: String?
    var to: String
    var contentType: String
    var body: [UInt8]
    var receivedAt: Int64

    init(_ message: SIPReceivedMessage) {
        callID = message.callID
        from = message.from.map { $0.uri.description } ?? ""
        fromDisplayName = message.from?.displayName
        to = message.to.map { $0.uri.description } ?? ""
        contentType = (message.contentType ?? "text/plain").lowercased()
        body = message.body
        receivedAt = Clock.unixMilliseconds()
    }

    init(_ stored: StoredMessage) {
        callID = stored.callID
        from = stored.from
        to = stored.to
        contentType = stored.contentType.lowercased()
        body = stored.body
        receivedAt = stored.receivedAt
    }

    /// The content type and body inside a CPIM wrapper, or the message's own.
    var innerContent: (type: String, body: [UInt8]) {
        if contentType.hasPrefix("message/cpim"), let cpim = CPIMMessage(bytes: body) {
            return (cpim.contentType, cpim.body)
        }
        return (contentType.split(separator: ";").first.map(String.init) ?? contentType, body)
    }

    /// The IMDN to send when the sender asked for a delivery notification: (recipient, CPIM body).
    func deliveryNotice(recipient: String) -> (to: String, body: [UInt8])? {
        guard contentType.hasPrefix("message/cpim"), let cpim = CPIMMessage(bytes: body),
            cpim.dispositionNotification.contains("positive-delivery"), let messageID = cpim.imdnMessageID, !from.isEmpty
        else { return nil }
        let now = Clock.rfc3339(unixSeconds: Clock.unixMilliseconds() / 1000)
        let notificationID = (try? SecureRandom.hex(8)) ?? String(Clock.unixMilliseconds())
        let notice = IMDN.deliveryNotification(
            messageID: messageID, from: recipient, to: from, notificationID: notificationID, dateTime: now,
            originalDateTime: cpim.header("DateTime"))
        return (from, notice.bytes)
    }
}

extension StoredMessage {
    init(_ received: ReceivedContent) {
        self.init(
            callID: received.callID, from: received.from, to: received.to, contentType: received.contentType,
            body: received.body, receivedAt: received.receivedAt)
    }
}
