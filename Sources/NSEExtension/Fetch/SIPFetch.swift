import Logging
import NSEAppRegistration
import NSEChat
import NSECrypto
public import NSEDevice
import NSEJSON
import NSEPayload
import NSESIP
import NSESystem

/// The Linphone path: the push carries only a Call-ID; register, let the server re-deliver the held MESSAGE,
/// pick the one with that Call-ID, keep every other one in the shared store for a later push.
///
/// The decisions are `FetchMachine`'s; `FetchDriver` runs it over one merged stream of events.
public struct SIPFetch: Sendable {
    public var device: Device
    public var rewriter: Rewriter
    /// The host, for its expiry notice and a VoIP report.
    var host: HostListener?
    /// Stop waiting this long before the budget ends (liblinphone: 25 s of 30).
    public var fetchFraction: Double = 25.0 / 30.0
    /// The timing rules: re-REGISTER interval, the flush's quiet window, the IMDN's patience.
    var rules = FetchMachine.Rules()

    public init(device: Device, rewriter: Rewriter) {
        self.device = device
        self.rewriter = rewriter
    }

    /// The same fetch, hearing the host through `host`.
    func with(host: HostListener?) -> SIPFetch {
        var copy = self
        copy.host = host
        return copy
    }

    /// What a fetch delivers: the content, and the store mark to make once the host has it.
    public struct Fetched: Sendable {
        public var content: DeliveredContent
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

    /// Fetches the message with `callID` and turns it into content; ``Fetched/markShown()`` once the host has it.
    public func run(callID: String, request: ServiceRequest) async -> Fetched {
        let start = Clock.monotonicNanoseconds()
        var report = FetchReport()
        // The App Group store. When it cannot be opened the fetch still shows its own message, but refuses (500) the
        // others, so the server keeps them: a message is answered 200 only once it is durably kept.
        var store: MessageStore?
        var group: AppGroupStore?
        do {
            group = try device.keptAppGroup()
            store = group?.messages
            try store?.purge()
        } catch {
            report.storeError = error.description
        }
        func finish(_ content: DeliveredContent, _ report: FetchReport, shown: Bool = false) -> Fetched {
            var content = content
            var info = content.info ?? JSONObject()
            for (key, value) in report.json(total: Clock.millisecondsSince(start)) { info[key] = value }
            content.info = info
            return Fetched(content: content, shown: shown ? store : nil, callID: callID)
        }
        do {
            if let stored = try store?.take(callID: callID) {
                report.fromStore = true
                return finish(content(for: ReceivedContent(stored), request: request), report, shown: true)
            }
            if let viewer = try store?.shownBy(callID: callID) {
                // The same push again (APNs may deliver twice), or a message the app in the foreground received
                // itself: it was shown; it is not fetched again and not shown twice. An app that may filter shows
                // nothing; one that may not shows its loc-key text.
                report.alreadyShown = true
                let by = viewer == .app ? "by the app in the foreground" : "by an earlier notification"
                let reason = "already-shown: the message with Call-ID \(callID) was shown \(by)"
                return finish(
                    device.config.filtering
                        ? DeliveredContent(content: [:], reason: reason) : rewriter.fallback(reason: reason), report)
            }
        } catch {
            report.storeError = report.storeError ?? error.description
        }
        guard let account = device.config.sip else {
            return finish(
                rewriter.fallback(
                    reason:
                        "fetch-unavailable: the payload names Call-ID \(callID) but the device has no SIP account to fetch it with"
                ), report)
        }
        let registration: SIPRegistration
        do {
            registration = try AppRegistration.registration(
                for: device, account: account, password: try device.sipPassword())
            report.transport = try SIPTransportKind(proxy: registration.proxy).rawValue
        } catch {
            return finish(rewriter.fallback(reason: "sip-account-invalid: \(error)"), report)
        }

        // The shared core (liblinphone): an extension starts its core only while the main app's is not running. As
        // linphone-iphone, it then cannot fetch the message and delivers empty content: the app in the foreground
        // receives the message itself (an app that may filter shows nothing; one that may not, the push as sent).
        var core: SharedCore?
        if let shared = group?.sharedCore(watchdogSeconds: device.config.sharedCoreWatchdog) {
            do {
                switch try shared.startExecutor() {
                case .mainCoreRunning:
                    report.sharedCore = "main-core-running"
                    return finish(
                        DeliveredContent(
                            content: [:],
                            reason: "main-core-running: the app is in the foreground and receives the message itself"),
                        report)
                case .started:
                    report.sharedCore = "executor-started"
                    core = shared
                }
            } catch {
                report.storeError = report.storeError ?? error.description
            }
        }

        let budget = Double(request.budgetMilliseconds) * fetchFraction
        let (inputs, feed) = AsyncStream<FetchInput>.makeStream()
        var configuration = AppRegistration.configuration(for: account)
        configuration.messageAcceptor = FetchDriver.acceptor(feeding: feed)
        // The process's one event-loop thread: a warm process starts no thread per fetch.
        let agent = SIPUserAgent(
            configuration: configuration, eventLoopGroup: SIPUserAgent.processEventLoopGroup,
            logger: Logger(label: "nse.extension.sip"))
        host?.onExpiry { feed.yield(.event(.expiryNotice)) }
        // The main app asks for the core with SIGUSR1; one that asked before the handler was in place is seen in the
        // store.
        CoreStopSignal.onStop { feed.yield(.event(.coreStopRequested)) }
        if (try? core?.isStopRequested()) == true { feed.yield(.event(.coreStopRequested)) }
        var driver = FetchDriver(
            machine: FetchMachine(target: callID, deadline: start + UInt64(budget * 1_000_000), rules: rules),
            agent: agent, registration: registration, store: store, aor: account.aor, feed: feed, start: start,
            report: report)
        let outcome = await driver.run(inputs)
        host?.stopExpiryHandler()
        CoreStopSignal.clear()
        // The core is stopped: an app waiting for it is woken.
        if let waiting = try? core?.releaseExecutor() { CoreStopSignal.wake(waiting) }
        report = driver.report

        let content: DeliveredContent
        switch outcome {
        case .found(let found):
            // Shown once the host has it (Fetched.markShown): then the copy kept on arrival (or claimed from the
            // store), and any copy another extension process kept from the same flush, is not shown again.
            return finish(self.content(for: found, request: request), report, shown: true)
        case .expired:
            content = rewriter.fallback(reason: "time-will-expire: Call-ID \(callID) had not arrived")
        case .registerFailed(let failure):
            report.error = failure
            content = rewriter.fallback(reason: failure)
        case .notFound:
            content = rewriter.fallback(
                reason: "not-found: no MESSAGE with Call-ID \(callID) arrived within \(Int(budget)) ms")
        case .coreStopped:
            report.sharedCore = "executor-stopped"
            content = DeliveredContent(
                content: [:],
                reason:
                    "core-stopped: the app came to the foreground and took the shared core; it receives the message itself"
            )
        }
        return finish(content, report)
    }

    /// Opens a received message: a sealed envelope (in CPIM or bare), or plain text shown as it is.
    func content(for received: ReceivedContent, request: ServiceRequest) -> DeliveredContent {
        let (type, body) = received.innerContent
        let text = String(decoding: body, as: UTF8.self)
        var content: DeliveredContent
        if Envelope.hasFormatTag(text) || type == ReceivedContent.envelopeType {
            let escalation = CallEscalation(device: device, rewriter: rewriter, channel: host, request: request)
            content = EnvelopeOpener(device: device, rewriter: rewriter, escalation: escalation).open(
                text, source: "sip")
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
