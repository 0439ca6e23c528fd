import Logging
import NSEAppRegistration
public import NSEDevice
import NSEPayload
import NSESIP
import NSESystem
import Synchronization

/// The Linphone path: the push carries only a Call-ID; register, let the server re-deliver the held MESSAGE,
/// pick the one with that Call-ID, keep every other one in the shared store for a later push.
///
/// One way in, ``fetch(callID:request:logger:)``. The flush's decisions are `FetchMachine`'s, run by `FetchDriver`
/// over one merged stream of events; every way a fetch ends is a `FetchOutcome`, turned into content in one place
/// (`SIPFetch+Content.swift`).
public struct SIPFetch: Sendable {
    public var device: Device
    public var rewriter: Rewriter
    /// The host, for its expiry notice and a VoIP report (nil in the main app, which has none).
    let host: HostLink?
    /// Stop waiting this long before the budget ends (liblinphone: 25 s of 30).
    public var fetchFraction: Double = 25.0 / 30.0
    /// The timing rules: re-REGISTER interval, the flush's quiet window, the IMDN's patience.
    var rules = FetchMachine.Rules()

    init(device: Device, rewriter: Rewriter, host: HostLink?) {
        self.device = device
        self.rewriter = rewriter
        self.host = host
    }

    /// Whether the process's event loop runs. Its first fetch starts it: nothing before starts a task.
    private static let loopRunning = Atomic<Bool>(false)

    /// Fetches the message with `callID` and turns it into content, blocking the calling thread until then;
    /// ``Fetched/markShown()`` once the host has it. The user agent logs to `logger`, the process's.
    ///
    /// The network part runs on the process's event loop, the content on this thread: a call offer waits for the
    /// host's answer here, never on the loop. The process's first fetch reads the App Group store on this thread
    /// while its connection opens on a thread of its own: the loop's thread started, the socket, NIO's types used
    /// for the first time, and the store's database opened take about a millisecond each, and overlap. Later ones,
    /// the loop running, run whole on it: one hand-off between threads instead of three.
    func fetch(callID: String, request: ServiceRequest, logger: Logger) -> Fetched {
        var logger = logger
        logger[metadataKey: "nse.part"] = "sip"
        guard !Self.loopRunning.exchange(true, ordering: .relaxed) else {
            let end = BlockingWait.run(reading: host) { [logger] in
                await fetchOnLoop(callID: callID, request: request, logger: logger)
            }
            return makeFetched(end, callID: callID, request: request)
        }
        switch begin(callID: callID, request: request, connectingOnThread: true, logger: logger) {
        case .decided(let end, let opening):
            let fetched = makeFetched(end, callID: callID, request: request)
            // Closed once the content is made: making it overlaps the connection's opening.
            Connection.abandon(opening)
            return fetched
        case .network(let network):
            let end = BlockingWait.run(reading: host) { await network.awaitMessage() }
            return makeFetched(end, callID: callID, request: request)
        }
    }

    /// A warm process's fetch on the running event loop: the store read, then the flush if the store did not decide.
    private func fetchOnLoop(callID: String, request: ServiceRequest, logger: Logger) async -> FetchEnd {
        switch begin(callID: callID, request: request, connectingOnThread: false, logger: logger) {
        case .decided(let end, let opening):
            Connection.abandon(opening)
            return end
        case .network(let network):
            return await network.awaitMessage()
        }
    }

    /// How long the fetch waits for its message: `fetchFraction` of the push's budget.
    func waitMilliseconds(for request: ServiceRequest) -> Double {
        Double(request.budgetMilliseconds) * fetchFraction
    }

    /// How a fetch goes on after ``begin(callID:request:connectingOnThread:logger:)``.
    private enum Begun {
        /// Decided without the network: the App Group store had the message, it was shown before, the device has
        /// no account, or the main app has the shared core. `opening` is the connection opened for nothing, to be
        /// closed with ``Connection/abandon(_:)``.
        case decided(FetchEnd, opening: Connection.Opening?)
        /// Register and wait for the message: ``Network/awaitMessage()``, on the event loop.
        case network(Network)
    }

    /// The part of a fetch that needs no waiting, on the calling thread: it starts opening the connection to the
    /// proxy first (on the process's event loop), then reads the App Group store while that connects. The decisions
    /// keep their order (the store's copy, then "already shown", then the account and the shared core). With
    /// `connectingOnThread` the user agent is made on a thread of its own, so that the two overlap.
    private func begin(callID: String, request: ServiceRequest, connectingOnThread: Bool, logger: Logger) -> Begun {
        let start = SystemClock.monotonicNanoseconds()
        var report = FetchReport()
        // The account's registration, and the connection to its proxy opening while the store is read.
        let (inputs, feed) = AsyncStream<FetchInput>.makeStream()
        let device = device
        // Its clock starts with the fetch; without `record_sip` nothing is traced.
        let trace = request.recordSIP.map { _ in SIPTrace() }
        let opening = device.config.sip.map { account in
            Connection.Opening(onThread: connectingOnThread) {
                Result { () throws(SIPFetchFailure) in
                    try Connection(device: device, account: account, trace: trace, feed: feed, logger: logger)
                }
            }
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
        func decide(_ outcome: FetchOutcome, message: ReceivedContent? = nil, shownBy: MessageStore.Viewer? = nil)
            -> Begun
        {
            feed.finish()
            let end = FetchEnd(
                outcome: outcome, message: message, shownBy: shownBy, report: report, store: store, start: start)
            return .decided(end, opening: opening)
        }
        do {
            switch try store?.claim(callID: callID) {
            case .claimed(let stored)?:
                report.fromStore = true
                return decide(.found(.store), message: ReceivedContent(stored))
            case .shown(let viewer)?:
                return decide(.shownElsewhere, shownBy: viewer)
            case .claimedElsewhere?:
                return decide(.shownElsewhere)
            case .absent?, nil:
                break
            }
        } catch {
            report.storeError = report.storeError ?? error.description
        }
        guard let account = device.config.sip, let connected = opening?.value() else {
            return decide(
                .unavailable(
                    ReasonCode.fetchUnavailable.reason(
                        "the payload names Call-ID \(callID) but the device has no SIP account to fetch it with")))
        }
        let connection: Connection
        switch connected {
        case .success(let value): connection = value
        case .failure(let failure): return decide(.unavailable(failure.reason))
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
                    return decide(.mainCoreRunning)
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

    /// The account's registration and the user agent of a fetch, opening its connection to the proxy from the moment
    /// the fetch begins.
    struct Connection: Sendable {
        /// A connection being opened (on a thread of its own, or at once) while the store is read.
        typealias Opening = Background<Result<Connection, SIPFetchFailure>>

        let registration: SIPRegistration
        let transport: SIPTransportKind
        let agent: SIPUserAgent
        /// What the agent's connections sent and received, when the host asked for the exchange (`record_sip`).
        let trace: SIPTrace?

        /// Throws when the account cannot register as configured (its password file, its proxy's transport).
        init(
            device: Device, account: SIPAccount, trace: SIPTrace?, feed: AsyncStream<FetchInput>.Continuation,
            logger: Logger
        ) throws(SIPFetchFailure) {
            self.trace = trace
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
            configuration.trace = trace
            // The process's one event-loop thread: a warm process starts no thread per fetch.
            let agent = SIPUserAgent(
                configuration: configuration, eventLoopGroup: SIPUserAgent.processEventLoopGroup, logger: logger)
            self.agent = agent
            // A connection that fails here fails again, with its error, when the fetch registers.
            Task { _ = try? await agent.transport(for: proxy) }
        }

        /// The fetch was decided without the network: once opened, the connection is closed, unused, in the
        /// background.
        static func abandon(_ opening: Opening?) {
            guard case .success(let connection)? = opening?.value() else { return }
            let agent = connection.agent
            Task { await agent.close() }
        }
    }

    /// A fetch that registers and waits for its message on the event loop, the store having decided nothing.
    struct Network: Sendable {
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

        /// Registers, takes the awaited message from the flush and keeps the others; hands the shared core back.
        func awaitMessage() async -> FetchEnd {
            let feed = feed
            fetch.host?.onExpiry { feed.yield(.event(.expiryNotice)) }
            // The main app asks for the core with SIGUSR1; one that asked before the handler was in place is seen in
            // the store.
            CoreStopSignal.onStop { feed.yield(.event(.coreStopRequested)) }
            if (try? core?.isStopRequested()) == true { feed.yield(.event(.coreStopRequested)) }
            let deadline = start + UInt64(fetch.waitMilliseconds(for: request) * 1_000_000)
            var driver = FetchDriver(
                machine: FetchMachine(target: callID, deadline: deadline, rules: fetch.rules),
                agent: connection.agent, registration: connection.registration, store: store, aor: account.aor,
                feed: feed, start: start, report: report)
            var end = await driver.run(inputs)
            // The agent is closed: the trace is whole.
            if let trace = connection.trace, let mode = request.recordSIP {
                end.report.sipExchange = SIPExchange(mode: mode, callID: callID).json(
                    trace, transport: connection.transport.rawValue)
            }
            fetch.host?.stopExpiryHandler()
            CoreStopSignal.clear()
            // The core is stopped: an app waiting for it is woken.
            if let waiting = try? core?.releaseExecutor() { CoreStopSignal.wake(waiting) }
            return end
        }
    }
}

/// Why a fetch cannot register, decided before the store is read and reported after it.
struct SIPFetchFailure: Error, Sendable {
    let reason: String
}
