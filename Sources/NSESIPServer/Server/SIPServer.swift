public import NIOCore
import NIOPosix
public import Logging
public import NSESIP
import NSESystem

/// A registrar + fork-late MESSAGE store-and-forward server with APNs pushes (Flexisip-like), for tests and the CLI.
///
/// The wiring of its parts: `Listeners` bring requests and responses in; the actor checks them (`FaultPlan`,
/// `ServerResponse`) and hands REGISTER to the `Registrar`, MESSAGE to the `Forwarder` (with `PendingSenders` for
/// the senders' answers and `PushSender` for the pushes), and reports everything as `SIPServerEvent`s.
public actor SIPServer {
    /// The configuration in use.
    public nonisolated let configuration: SIPServerConfiguration
    /// Everything the server reports (also kept in `eventLog()`); finishes on `shutdown()`.
    public nonisolated let events: AsyncStream<SIPServerEvent>
    let logger: Logger
    /// The event loops the sockets run on: the caller's, or a one-thread group the server made and shuts down.
    private enum EventLoops {
        case borrowed(any EventLoopGroup)
        case owned(MultiThreadedEventLoopGroup)

        var group: any EventLoopGroup {
            switch self {
            case .borrowed(let group): return group
            case .owned(let group): return group
            }
        }
    }

    private let loops: EventLoops
    private let inbound: AsyncStream<InboundEvent>
    private let inboundContinuation: AsyncStream<InboundEvent>.Continuation

    /// Where the server is in its life: `start()` moves it from `created` to `running`, `shutdown()` to `stopped`.
    private enum Phase {
        case created
        case starting
        /// `root` runs the task tree (`tree`), the one parent of everything the server runs.
        case running(root: Task<Void, Never>)
        case stopped
    }

    private var phase = Phase.created
    private let tree = TaskTree()
    var faults: FaultPlan
    let pushSender: PushSender
    var listeners = Listeners()
    /// The durable copy of the bindings and held messages (nil without a database directory: memory only).
    var database: ServerDatabase? = nil
    var registrar: Registrar
    var forwarder: Forwarder
    var senders = PendingSenders()
    private var serverTransactions: SIPServerTransactionTable
    private var log: EventLog

    /// Creates a server; without a group it owns a one-thread event loop group, released by `shutdown()`.
    public init(configuration: SIPServerConfiguration, eventLoopGroup: (any EventLoopGroup)? = nil,
                logger: Logger = Logger(label: "nse.sipserver")) {
        self.configuration = configuration
        self.logger = logger
        loops = eventLoopGroup.map { .borrowed($0) } ?? .owned(MultiThreadedEventLoopGroup(numberOfThreads: 1))
        log = EventLog()
        events = log.stream
        (inbound, inboundContinuation) = AsyncStream<InboundEvent>.makeStream(bufferingPolicy: .unbounded)
        serverTransactions = SIPServerTransactionTable(lifetime: configuration.timers.timerF)
        faults = FaultPlan(configuration.faults)
        registrar = Registrar(configuration: configuration)
        forwarder = Forwarder(held: HeldStore(database: nil, logger: logger), timers: configuration.timers, logger: logger)
        pushSender = PushSender(settings: configuration.push)
    }

    // MARK: - lifecycle

    /// Loads users and held messages, binds every listener and returns the bound addresses (actual ports).
    public func start() async throws -> [SIPServerBoundAddress] {
        switch phase {
        case .created: phase = .starting
        case .starting, .running: return listeners.addresses
        case .stopped: throw SIPServerError("server was shut down")
        }
        do {
            try registrar.loadUsers()
            if let directory = configuration.databaseDirectory {
                let database = try ServerDatabase.open(directory: directory, logger: logger)
                self.database = database
                var held = HeldStore(database: database, logger: logger)
                for message in try held.load() { registrar.noteKnown(message.aor) }
                forwarder = Forwarder(held: held, timers: configuration.timers, logger: logger)
            }
            listeners = try await Listeners.bind(configuration, group: loops.group, logger: logger)
            try restoreBindings()
        } catch {
            await shutdown()
            throw error
        }
        guard case .starting = phase else {
            // `shutdown()` ran while the listeners were being bound: close what it could not see.
            listeners.closeAll()
            throw SIPServerError("server was shut down")
        }
        let serving = listeners.bound
        phase = .running(root: Task { await self.run(serving: serving) })
        sweep()
        logger.info("sip server started", metadata: ["sip.listeners": "\(listeners.addresses.map(\.description))"])
        return listeners.addresses
    }

    /// Closes listeners and connections, cancels timers and pushes, finishes `events`; idempotent.
    public func shutdown() async {
        let root: Task<Void, Never>?
        switch phase {
        case .stopped: return
        case .running(let running): root = running
        case .created, .starting: root = nil
        }
        phase = .stopped
        tree.finish()
        root?.cancel()
        senders.removeAll()
        forwarder.stopAll()
        listeners.closeAll()
        inboundContinuation.finish()
        await root?.value
        log.finish()
        if case .owned(let group) = loops { try? await group.shutdownGracefully() }
        logger.info("sip server stopped")
    }

    /// The addresses bound by `start()`.
    public var addresses: [SIPServerBoundAddress] { listeners.addresses }

    /// Every event so far (the newest 10,000), oldest first.
    public func eventLog() -> [SIPServerEvent] { log.all }

    // MARK: - events and tasks

    func emit(_ event: SIPServerEvent) { log.append(event) }

    /// Runs the task tree: a child serving each listener (and its connections), the inbound loop and the expiry
    /// sweeper, beside the spawned jobs. Returns once `shutdown()` has finished and cancelled the tree.
    private nonisolated func run(serving listeners: [BoundListener]) async {
        let (inbound, interval) = (self.inbound, configuration.expirySweepInterval)
        let (sink, limits, logger) = (inboundContinuation, configuration.limits, self.logger)
        let serving: [TaskTree.Job] = listeners.map { listener in
            { await listener.serve(sink: sink, limits: limits, logger: logger) }
        }
        await tree.run(serving + [
            { for await event in inbound { await self.process(event) } },
            {
                while true {
                    do { try await Task.sleep(for: interval) } catch { return }
                    await self.sweep()
                }
            },
        ])
    }

    /// Runs `body` as a child of the server's task tree (dropped once the server stops).
    func spawn(_ body: @escaping TaskTree.Job) {
        guard case .running = phase else { return }
        tree.spawn(body)
    }

    private var isStopped: Bool {
        if case .stopped = phase { return true }
        return false
    }

    // MARK: - inbound dispatch

    private func process(_ event: InboundEvent) async {
        guard !isStopped else { return }
        switch event {
        case .opened(let flow):
            listeners.opened(flow)
        case .closed(let flow):
            listeners.closed(flow)
        case .datagram(let message, let flow):
            if faults.dropsDatagram() {
                logger.debug("sip server dropping datagram (fault knob)", metadata: ["sip.count": "\(faults.datagramCount)"])
                return
            }
            if let message { dispatch(message, flow: flow) }
        case .message(let message, let flow):
            dispatch(message, flow: flow)
        }
    }

    private func dispatch(_ message: SIPMessage, flow: ServerFlow) {
        switch message {
        case .response(let response):
            if let outcome = forwarder.answer(response) { record(outcome) }
        case .request(let request):
            if request.method.uppercased() == "ACK" { return }
            var log = logger
            // A Call-ID with control characters is refused below; it is never logged.
            if request.headers.firstInvalidField == nil {
                log[metadataKey: "sip.call_id"] = "\(request.headers.callID ?? "")"
            }
            log[metadataKey: "sip.method"] = "\(request.method)"
            let key: String
            switch serverTransactions.receive(request) {
            case .retransmission(let stored):
                log.debug("sip server absorbed retransmission")
                if let stored { flow.send(stored) }
                return
            case .new(let k):
                key = k
            }
            switch faults.arrival(of: request) {
            case .handle:
                handleRequest(request, flow: flow, transactionKey: key)
            case .ignore:
                log.debug("sip server ignoring request (neverAnswer)")
            case .delay(let delay):
                spawn { [weak self] in
                    do { try await Task.sleep(for: delay) } catch { return }
                    await self?.handleRequest(request, flow: flow, transactionKey: key)
                }
            }
        }
    }

    private func handleRequest(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard !isStopped else { return }
        let method = request.method.uppercased()
        if let refusal = ServerResponse.refusal(of: request) {
            if let field = request.headers.firstInvalidField {
                logger.info("sip server refused a request with a control character in a header", metadata: [
                    "sip.method": "\(method)", "sip.header": "\(field)",
                ])
            }
            respond(request, flow: flow, transactionKey: transactionKey, status: refusal.status, reason: refusal.reason)
            return
        }
        switch faults.answer(for: method, over: flow.kind) {
        case nil:
            break
        case .closeConnection:
            logger.debug("sip server closing connection after REGISTER (fault knob)", metadata: ["sip.method": "REGISTER"])
            flow.close()
            return
        case .serviceUnavailable:
            respond(request, flow: flow, transactionKey: transactionKey, status: 503, extraHeaders: [("Retry-After", "5")])
            return
        case .challenge:
            let realm = configuration.realm ?? request.headers.to?.uri.host ?? "nse"
            respond(request, flow: flow, transactionKey: transactionKey, status: 401,
                    extraHeaders: registrar.challengeHeaders(realm: realm, stale: false))
            return
        }
        switch method {
        case "REGISTER": handleRegister(request, flow: flow, transactionKey: transactionKey)
        case "MESSAGE": handleMessage(request, flow: flow, transactionKey: transactionKey)
        case "OPTIONS": respond(request, flow: flow, transactionKey: transactionKey, status: 200,
                                extraHeaders: [("Allow", "REGISTER, MESSAGE, OPTIONS")])
        default: respond(request, flow: flow, transactionKey: transactionKey, status: 501,
                         extraHeaders: [("Allow", "REGISTER, MESSAGE, OPTIONS")])
        }
    }

    /// Sends a final (or provisional) response on the request's flow and remembers it for retransmissions.
    func respond(_ request: SIPRequest, flow: ServerFlow, transactionKey: String, status: Int, reason: String? = nil,
                         extraHeaders: [(String, String)] = [], contacts: [String] = []) {
        let bytes = ServerResponse.make(to: request, over: flow, status: status, reason: reason, extraHeaders: extraHeaders,
                                        contacts: contacts, serverHeader: configuration.serverHeader).serialized()
        if status >= 200 { serverTransactions.store(response: bytes, for: transactionKey) }
        flow.send(bytes)
        if status >= 200 {
            // A refused Call-ID with control characters is not repeated in events either.
            let callID = request.headers.firstInvalidField == nil ? request.headers.callID ?? "" : ""
            emit(.answered(method: request.method.uppercased(), callID: callID, status: status))
        }
    }

    // MARK: - expiry

    private func sweep() {
        guard !isStopped else { return }
        for message in forwarder.sweep(now: Clock.unixSeconds()) {
            emit(.expired(aor: message.aor, callID: message.callID, id: message.id))
            logger.info("sip server held message expired", metadata: [
                "sip.call_id": "\(message.callID)", "sip.method": "MESSAGE", "sip.aor": "\(message.aor)",
            ])
        }
        for event in registrar.sweep() { emit(event) }
    }
}
