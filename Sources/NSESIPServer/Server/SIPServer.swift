public import Logging
public import NIOCore
import NIOPosix
import NSESIP
import NSESystem

/// A registrar + fork-late MESSAGE store-and-forward server + call-holding proxy with APNs pushes (Flexisip-like),
/// for tests and the CLI.
///
/// The wiring of its parts: `Listeners` bring requests and responses in; the actor checks them (`SIPFaultPlan`,
/// `ServerResponse`) and hands REGISTER to the `Registrar`, MESSAGE to the `Forwarder` (with `PendingSenders` for
/// the senders' answers and `PushSender` for the pushes), INVITE and its dialog to the `CallTable`, and reports
/// everything as `SIPServerEvent`s. This file holds its state, life cycle and task tree; the paths are
/// `SIPServer+Request` (inbound checks and answers), `SIPServer+Register`, `SIPServer+Message` and `SIPServer+Call`.
public actor SIPServer {
    /// The configuration in use.
    public nonisolated let configuration: SIPServerConfiguration
    /// Everything the server reports (also kept in `eventLog()`); finishes on `shutdown()`.
    public nonisolated let events: AsyncStream<SIPServerEvent>
    let logger: Logger
    /// What the server counts (its events, and the gauges its parts set).
    let metrics: SIPServerMetrics
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
    let tree = TaskTree()
    var faults: SIPFaultPlan
    let pushSender: PushSender
    var listeners = Listeners()
    /// The durable copy of the bindings and held messages (nil without a database directory: memory only).
    var database: ServerDatabase? = nil
    var registrar: Registrar
    var forwarder: Forwarder
    var senders = PendingSenders()
    var serverTransactions: SIPServerTransactionTable
    /// The calls going through (`SIPServer+Call`).
    var calls: CallTable
    /// The chat rooms the server is the focus of (`SIPServer+Room`).
    var rooms = RoomTable()
    private var log: EventLog

    /// Creates a server; without a group it owns a one-thread event loop group, released by `shutdown()`. It logs to
    /// `logger`, the caller's (a library makes none of its own), and counts with `metrics` (by default nothing).
    public init(
        configuration: SIPServerConfiguration, eventLoopGroup: (any EventLoopGroup)? = nil,
        metrics: SIPServerMetrics = SIPServerMetrics(), logger: Logger
    ) {
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        loops = eventLoopGroup.map { .borrowed($0) } ?? .owned(MultiThreadedEventLoopGroup(numberOfThreads: 1))
        log = EventLog()
        events = log.stream
        (inbound, inboundContinuation) = AsyncStream<InboundEvent>.makeStream(bufferingPolicy: .unbounded)
        serverTransactions = SIPServerTransactionTable(lifetime: configuration.timers.timerF)
        calls = CallTable(linger: configuration.timers.timerF, metrics: metrics)
        faults = SIPFaultPlan(configuration.faults)
        registrar = Registrar(configuration: configuration, metrics: metrics)
        forwarder = Forwarder(
            held: HeldStore(database: nil, logger: logger, metrics: metrics), timers: configuration.timers,
            logger: logger)
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
                var held = HeldStore(database: database, logger: logger, metrics: metrics)
                for message in try held.load() { registrar.noteKnown(message.aor) }
                forwarder = Forwarder(held: held, timers: configuration.timers, logger: logger)
                try loadRooms()
            }
            listeners = try await Listeners.bind(
                configuration, group: loops.group, sink: inboundContinuation, logger: logger)
            try restoreBindings()
        } catch {
            await discardUnservedListeners()
            await shutdown()
            throw error
        }
        guard case .starting = phase else {
            // `shutdown()` ran while the listeners were being bound: close what it could not see.
            await discardUnservedListeners()
            throw SIPServerError("server was shut down")
        }
        let serving = listeners.bound
        phase = .running(root: Task { await self.run(serving: serving) })
        sweep()
        logger.info("sip server started", metadata: ["sip.listeners": "\(listeners.addresses.map(\.description))"])
        return listeners.addresses
    }

    /// Closes the listeners `start()` bound and will not serve.
    private func discardUnservedListeners() async {
        var unserved = listeners
        listeners = Listeners()
        await unserved.discard()
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
        rooms.stopAll()
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

    func emit(_ event: SIPServerEvent) {
        metrics.count(event)
        log.append(event)
    }

    /// Runs the task tree: a child serving each listener (a stream listener's connections serve themselves), the
    /// inbound loop and the expiry sweeper, beside the spawned jobs. Returns once `shutdown()` has finished and
    /// cancelled the tree.
    private nonisolated func run(serving listeners: [BoundListener]) async {
        let (inbound, interval) = (self.inbound, configuration.expirySweepInterval)
        let (sink, limits, logger) = (inboundContinuation, configuration.limits, self.logger)
        let serving: [TaskTree.Job] = listeners.map { listener in
            { await listener.serve(sink: sink, limits: limits, logger: logger) }
        }
        await tree.run(
            serving + [
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

    var isStopped: Bool {
        if case .stopped = phase { return true }
        return false
    }

    // MARK: - expiry

    private func sweep() {
        guard !isStopped else { return }
        for message in forwarder.sweep(now: SystemClock.unixSeconds()) {
            emit(.expired(aor: message.aor, callID: message.callID, id: message.id, devices: message.pendingDevices))
            logger.info(
                "sip server held message expired",
                metadata: [
                    "sip.call_id": "\(message.callID)", "sip.method": "MESSAGE", "sip.aor": "\(message.aor)",
                ])
        }
        for event in registrar.sweep() { emit(event) }
        calls.sweep()
        sweepRooms()
    }
}
