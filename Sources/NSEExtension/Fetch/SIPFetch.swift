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
    /// Called on the event loop, where the loop already runs: the user agent is made on this thread.
    public func run(callID: String, request: ServiceRequest) async -> Fetched {
        switch begin(callID: callID, request: request, connectingOnThread: false) {
        case .done(let fetched): fetched
        case .network(let network): await network.finish()
        }
    }

    /// How a fetch goes on after ``begin(callID:request:connectingOnThread:)``.
    public enum Begun: Sendable {
        /// Decided without the network: the App Group store had the message, it was shown before, the device has
        /// no account, or the main app has the shared core.
        case done(Fetched)
        /// Register and wait for the message: ``Network/finish()``, in async code.
        case network(Network)
    }

    /// The part of a fetch that needs no waiting, on the calling thread: it starts opening the connection to the
    /// proxy first (on the process's event loop), then reads the App Group store while that connects. The decisions
    /// keep their order (the store's copy, then "already shown", then the account and the shared core); a fetch
    /// decided here closes the connection it opened, in the background, without sending anything on it.
    ///
    /// The extension calls it on its main thread for a process's first fetch. Its first connection (the event loop's
    /// thread started, the socket, NIO's types used for the first time) and its first App Group store read (the
    /// database opened, the write-ahead log's index, the schema) each take about a millisecond: with
    /// `connectingOnThread` the user agent is made on a thread of its own, so that the two overlap.
    public func begin(callID: String, request: ServiceRequest, connectingOnThread: Bool) -> Begun {
        let start = SystemClock.monotonicNanoseconds()
        var report = FetchReport()
        // The account's registration, and the connection to its proxy opening while the store is read.
        let (inputs, feed) = AsyncStream<FetchInput>.makeStream()
        let device = device
        let opening = device.config.sip.map { account in
            Background(onThread: connectingOnThread) {
                Result { () throws(SIPFetchFailure) in try Connection(device: device, account: account, feed: feed) }
            }
        }
        var connected: Result<Connection, SIPFetchFailure>? { opening?.value() }
        func done(_ fetched: Fetched) -> Begun {
            if case .success(let connection)? = connected { connection.abandon() }
            feed.finish()
            return .done(fetched)
        }

        // The App Group store. When it cannot be opened the fetch still shows its own message, but refuses (500) the
        // others, so the server keeps them: a message is answered 200 only once it is durably kept.
        var store: MessageStore?
        var group: AppGroupStore?
        do {
            group = try device.cachedAppGroup()
            store = group?.messages
            try store?.purge()
        } catch {
            report.storeError = error.description
        }
        func finish(_ content: DeliveredContent, _ report: FetchReport, shown: Bool = false) -> Fetched {
            Self.finished(content, report, start: start, shown: shown ? store : nil, callID: callID)
        }
        do {
            switch try store?.claim(callID: callID) {
            case .claimed(let stored)?:
                report.fromStore = true
                return done(finish(content(for: ReceivedContent(stored), request: request), report, shown: true))
            case .shown(let viewer)?:
                return done(finish(alreadyShown(callID, by: viewer, report: &report), report))
            case .claimedElsewhere?:
                return done(finish(alreadyShown(callID, by: nil, report: &report), report))
            case .absent?, nil:
                break
            }
        } catch {
            report.storeError = report.storeError ?? error.description
        }
        guard let account = device.config.sip, let connected else {
            return done(
                finish(
                    rewriter.fallback(
                        reason:
                            ReasonCode.fetchUnavailable.reason(
                                "the payload names Call-ID \(callID) but the device has no SIP account to fetch it with"
                            )
                    ), report))
        }
        let connection: Connection
        switch connected {
        case .success(let value): connection = value
        case .failure(let failure): return done(finish(rewriter.fallback(reason: failure.reason), report))
        }
        report.transport = connection.transport.rawValue

        // The shared core (liblinphone): an extension starts its core only while the main app's is not running. As
        // linphone-iphone, it then cannot fetch the message and delivers empty content: the app in the foreground
        // receives the message itself (an app that may filter shows nothing; one that may not, the push as sent).
        var core: SharedCore?
        if let shared = group?.sharedCore(watchdogSeconds: device.config.sharedCoreWatchdog) {
            do {
                switch try shared.startExecutor() {
                case .mainCoreRunning:
                    report.sharedCore = "main-core-running"
                    return done(
                        finish(
                            DeliveredContent(
                                content: [:],
                                reason:
                                    ReasonCode.mainCoreRunning.reason(
                                        "the app is in the foreground and receives the message itself")),
                            report))
                case .started:
                    report.sharedCore = "executor-started"
                    core = shared
                }
            } catch {
                report.storeError = report.storeError ?? error.description
            }
        }
        return .network(
            Network(
                fetch: self, callID: callID, request: request, start: start, report: report, store: store, core: core,
                account: account, connection: connection, inputs: inputs, feed: feed))
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

    /// The account's registration and the user agent of a fetch, opening its connection to the proxy from the moment
    /// the fetch begins.
    struct Connection: Sendable {
        let registration: SIPRegistration
        let transport: SIPTransportKind
        let agent: SIPUserAgent

        /// Throws when the account cannot register as configured (its password file, its proxy's transport).
        init(device: Device, account: SIPAccount, feed: AsyncStream<FetchInput>.Continuation) throws(SIPFetchFailure) {
            do {
                registration = try AppRegistration.registration(
                    for: device, account: account, password: try device.sipPassword())
                transport = try SIPTransportKind(proxy: registration.proxy)
            } catch {
                throw SIPFetchFailure(reason: ReasonCode.sipAccountInvalid.reason("\(error)"))
            }
            let proxy = registration.proxy
            var configuration = AppRegistration.configuration(for: account)
            configuration.messageAcceptor = FetchDriver.acceptor(feeding: feed)
            // The process's one event-loop thread: a warm process starts no thread per fetch.
            let agent = SIPUserAgent(
                configuration: configuration, eventLoopGroup: SIPUserAgent.processEventLoopGroup,
                logger: Logger(label: "nse.extension.sip"))
            self.agent = agent
            // A connection that fails here fails again, with its error, when the fetch registers.
            Task { _ = try? await agent.transport(for: proxy) }
        }

        /// The fetch was decided without the network: the connection is closed, unused, in the background.
        func abandon() {
            let agent = agent
            Task { await agent.close() }
        }
    }

    /// A fetch that registers and waits for its message: begun on a thread, finished in async code.
    public struct Network: Sendable {
        let fetch: SIPFetch
        let callID: String
        let request: ServiceRequest
        let start: UInt64
        let report: FetchReport
        let store: MessageStore?
        let core: SharedCore?
        let account: SIPAccount
        let connection: Connection
        let inputs: AsyncStream<FetchInput>
        let feed: AsyncStream<FetchInput>.Continuation

        /// Registers, takes the awaited message from the flush and keeps the others, then turns it into content.
        public func finish() async -> Fetched {
            let budget = Double(request.budgetMilliseconds) * fetch.fetchFraction
            let feed = feed
            fetch.host?.onExpiry { feed.yield(.event(.expiryNotice)) }
            // The main app asks for the core with SIGUSR1; one that asked before the handler was in place is seen in
            // the store.
            CoreStopSignal.onStop { feed.yield(.event(.coreStopRequested)) }
            if (try? core?.isStopRequested()) == true { feed.yield(.event(.coreStopRequested)) }
            var driver = FetchDriver(
                machine: FetchMachine(target: callID, deadline: start + UInt64(budget * 1_000_000), rules: fetch.rules),
                agent: connection.agent, registration: connection.registration, store: store, aor: account.aor,
                feed: feed, start: start, report: report)
            let outcome = await driver.run(inputs)
            fetch.host?.stopExpiryHandler()
            CoreStopSignal.clear()
            // The core is stopped: an app waiting for it is woken.
            if let waiting = try? core?.releaseExecutor() { CoreStopSignal.wake(waiting) }
            var report = driver.report

            let content: DeliveredContent
            switch outcome {
            case .found(let found):
                // Shown once the host has it (Fetched.markShown): then the copy kept on arrival (or claimed from the
                // store), and any copy another extension process kept from the same flush, is not shown again.
                return finished(fetch.content(for: found, request: request), report, shown: true)
            case .expired:
                content = fetch.rewriter.fallback(
                    reason: ReasonCode.timeWillExpire.reason("Call-ID \(callID) had not arrived"))
            case .registerFailed(let failure):
                report.error = failure
                content = fetch.rewriter.fallback(reason: failure)
            case .notFound:
                content = fetch.rewriter.fallback(
                    reason: ReasonCode.notFound.reason(
                        "no MESSAGE with Call-ID \(callID) arrived within \(Int(budget)) ms"))
            case .alreadyShown(let viewer):
                content = fetch.alreadyShown(callID, by: viewer, report: &report)
            case .coreStopped:
                report.sharedCore = "executor-stopped"
                content = DeliveredContent(
                    content: [:],
                    reason:
                        ReasonCode.coreStopped.reason(
                            "the app came to the foreground and took the shared core; it receives the message itself")
                )
            }
            return finished(content, report)
        }

        private func finished(_ content: DeliveredContent, _ report: FetchReport, shown: Bool = false) -> Fetched {
            SIPFetch.finished(content, report, start: start, shown: shown ? store : nil, callID: callID)
        }
    }

    /// The content with the fetch's diagnostics in its `info`.
    static func finished(
        _ content: DeliveredContent, _ report: FetchReport, start: UInt64, shown: MessageStore?, callID: String
    ) -> Fetched {
        var content = content
        var info = content.info ?? JSONObject()
        for (key, value) in report.json(total: SystemClock.millisecondsSince(start)) { info[key] = value }
        content.info = info
        return Fetched(content: content, shown: shown, callID: callID)
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
            content = rewriter.fallback(reason: ReasonCode.unsupportedContentType.reason("\(type.prefix(64))"))
        }
        if var info = content.info {
            info["call_id"] = .string(received.callID)
            info["from"] = .string(received.from)
            content.info = info
        }
        return content
    }
}

/// Why a fetch cannot register, decided before the store is read and reported after it.
struct SIPFetchFailure: Error, Sendable {
    let reason: String
}
