public import Logging
import NIOCore
import NIOPosix
import NSECrypto
public import NSEDevice
public import NSEHost
public import NSEJSON
import NSESystem

/// The part of `nse serve` that is not HTTP, one job a type: ``PushAdmission`` (slot, durable row, answer watched),
/// ``PushRunner`` (the host, on the delivery queue), ``ResultRecorder`` (the result recorded and told),
/// ``OfflineDevices`` (held pushes), ``UnfinishedPushes`` (a previous run's), beside the devices, the faults and the
/// request log the routes read.
public final class PushService: Sendable {
    public let devices: DeviceRegistry
    public let queue: DeliveryQueue
    public let store: ResultStore
    /// Accepted pushes whose 200 is not known to have been written yet.
    public let acknowledgements: Acknowledgements
    public let events: EventHub
    public let callbacks: ResultCallbacks
    /// Token authentication, when configured: every `POST /3/device` needs a valid provider token.
    public let authentication: ProviderAuthentication?
    /// Certificate authentication (`--client-ca`): a connection with a verified client certificate pushes to the
    /// app it names; one without needs a provider token.
    public let certificates: CertificateAuthentication?
    /// The APNs environment played (`--apns-environment`): only development answers with `apns-unique-id`.
    public let environment: ProviderCertificate.Environment
    public let extensionCommand: [String]
    public let limits: ExtensionLimits
    /// Warm extension processes, one per device, kept between pushes (`--extension-process warm`); nil: a fresh
    /// process per push.
    public let extensionProcesses: ExtensionProcessPool?
    /// Fresh extension processes forked, not exec'd (`--extension-launch fork`); nil: exec'd.
    public let forkServers: ExtensionForkServers?
    /// The faults injected now (`--fault`, `/v1/control/faults`, `/v1/control/unavailable`).
    public let faults: APNsFaultPlan
    /// Each provider's connections, counted while a `max_connections` fault rule is set.
    let providerConnections = ProviderConnections()
    /// `--record DIR`: pushes written as replay cases (`/v1/control/recording` switches it).
    public let recording: CaseRecording?
    /// Every `POST /3/device` as received and answered (`GET /v1/requests`).
    public let requests: RequestLog
    /// `--database`: the request log, push fault rules and results shared with the other nodes of a fleet; nil:
    /// this node keeps its own (docs/serve.md, "A fleet on PostgreSQL").
    public let fleet: (any FleetState)?
    /// What the server counts, and `/metrics`.
    public let metrics: ServeMetrics
    public let logger: Logger
    /// Broadcast channels and broadcasts (iOS 18; ``ChannelController``, ``BroadcastController``).
    let broadcasts: Broadcasts

    private let admission: PushAdmission
    let runner: PushRunner
    /// Devices with a push being admitted or run, and those given back to another node (docs/serve.md, "Coming
    /// back").
    var activity: DeviceActivity { runner.activity }
    /// What this node took over from stopped nodes of its fleet, and may give back.
    let adopted = AdoptedDevices()
    let offline: OfflineDevices
    private let unfinished: UnfinishedPushes
    /// Low-priority pushes waiting for their burst (`--low-priority-interval`); nil: they go at once.
    private let lowPriority: LowPriorityBatch?

    /// Threads for the result store's work outside a delivery (recording an accepted push, marking an answer lost,
    /// reading results): SQLite waits for the disk, never on an event loop or a cooperative thread.
    let storeThreads: NIOThreadPool

    /// A service dropped without a drain (an embedding that never stops it, a test) still lets its threads end.
    deinit {
        storeThreads.shutdownGracefully { _ in }
    }

    /// - Parameters:
    ///   - devices: devices opened already (`--device`): their databases are opened now.
    ///   - folder: the devices of `--devices` folders: indexed by token, opened on first use; a database is opened
    ///     now only where one exists (to find pushes a previous run left unrun).
    ///   - metrics: what the server counts and serves at `/metrics`; by default nothing.
    public init(
        devices: [Device], folder: [DeviceFolder.Entry] = [], concurrency: Int, queueCapacity: Int,
        extensionCommand: [String],
        limits: ExtensionLimits = ExtensionLimits(), extensionProcesses: ExtensionProcessPool? = nil,
        forkServers: ExtensionForkServers? = nil, authentication: ProviderAuthentication? = nil,
        certificates: CertificateAuthentication? = nil,
        environment: ProviderCertificate.Environment = .development, faults: APNsFaultPlan = APNsFaultPlan(),
        requestLogCapacity: Int = PushService.defaultRequestLogCapacity, lowPriorityInterval: Double = 0,
        openDatabases: Int = ResultStore.defaultMaxOpen, recording: CaseRecording? = nil,
        metrics: ServeMetrics = ServeMetrics(), liveActivityBudget: Int? = LiveActivityDelivery.defaultBudget,
        channels: ChannelStore? = nil, channelLimit: Int = ChannelStore.defaultLimit, fleet: (any FleetState)? = nil,
        logger: Logger
    ) {
        let registry = DeviceRegistry(devices: devices, folder: folder)
        let queue = DeliveryQueue(concurrency: concurrency, capacity: queueCapacity, metrics: metrics)
        let store = ResultStore(logger: logger, maxOpen: openDatabases)
        store.serve(folders: folder.map { Path.dirname($0.directory) })
        let used = folder.filter { store.mayHaveRows(directory: $0.directory) }
            .compactMap { registry.device(for: $0.remoteToken) }
        // Read now, before any push of this run is accepted: only a previous run's pushes are rerun.
        unfinished = UnfinishedPushes(devices: devices + used, store: store, logger: logger)
        // Threads that write accepted pushes (each waits for its sync): as many as pushes may wait for one batch's
        // sync to take the next one together (group commit, Database.batchedWrite); with two, batches held two.
        let storeThreads = NIOThreadPool(numberOfThreads: 8)
        storeThreads.start()
        let acknowledgements = Acknowledgements { row, device in
            storeThreads.submit { _ in
                do {
                    try store.markUnacknowledged(row, for: device)
                    fleet?.markUnacknowledged(row: row.id, device: device.config.remoteToken)
                    logger.warning(
                        "answer not delivered: push recorded as not acknowledged",
                        metadata: ["store.row": .stringConvertible(row.id)])
                } catch {
                    logger.error(
                        "answer not delivered, and not marked",
                        metadata: ["store.row": .stringConvertible(row.id), "store.error": .string("\(error)")])
                }
            }
        }
        let events = EventHub()
        // Other nodes' results come to this node's event stream too.
        // (Read only while someone follows this node's stream: each copy would otherwise cost every node a query.)
        fleet?.follow(
            wanted: { events.subscriberCount > 0 },
            { result, tokens in events.publish("notification", result, tokens: tokens) })
        let callbacks = ResultCallbacks(logger: logger)
        let recorder = ResultRecorder(
            store: store, events: events, callbacks: callbacks, queue: queue, recording: recording, limits: limits,
            metrics: metrics, logger: logger, fleet: fleet)
        let runner = PushRunner(
            queue: queue, store: store, recorder: recorder, extensionCommand: extensionCommand, limits: limits,
            extensionProcesses: extensionProcesses, forkServers: forkServers, recording: recording,
            liveActivities: LiveActivityDelivery(budget: liveActivityBudget, logger: logger),
            activity: DeviceActivity(),
            logger: logger)
        let offline = OfflineDevices(
            held: HeldPushes(
                offline: devices.filter { !$0.config.online }.map(\.directory)
                    + folder.filter { !$0.online }.map(\.directory)),
            runner: runner, recorder: recorder, storeThreads: storeThreads, logger: logger)
        let lowPriority = lowPriorityInterval > 0 ? LowPriorityBatch(interval: lowPriorityInterval) : nil
        lowPriority?.deliver = { burst in runner.release(burst, late: .burst) }
        self.devices = registry
        self.queue = queue
        self.store = store
        self.acknowledgements = acknowledgements
        self.events = events
        self.callbacks = callbacks
        self.authentication = authentication
        self.certificates = certificates
        self.environment = environment
        self.extensionCommand = extensionCommand
        self.limits = limits
        self.extensionProcesses = extensionProcesses
        self.forkServers = forkServers
        self.faults = faults
        self.recording = recording
        self.requests = RequestLog(capacity: fleet == nil ? requestLogCapacity : 0)
        self.fleet = fleet
        self.metrics = metrics
        self.logger = logger
        self.storeThreads = storeThreads
        self.runner = runner
        self.offline = offline
        self.lowPriority = lowPriority
        let admission = PushAdmission(
            queue: queue, store: store, storeThreads: storeThreads, acknowledgements: acknowledgements,
            offline: offline, lowPriority: lowPriority, runner: runner, logger: logger)
        self.admission = admission
        // Channels are the fleet's in a fleet, else this node's own.
        let keeper: Broadcasts.Keeper
        if let fleet {
            keeper = .fleet(fleet, limit: channelLimit)
        } else if let store = channels ?? Self.openChannels(devices: devices, folder: folder, logger: logger) {
            keeper = .node(store)
        } else {
            keeper = .none
        }
        // A broadcast's pushes are admitted as any push is; no answer is written for each, the broadcast's was.
        self.broadcasts = Broadcasts(keeper: keeper, devices: registry, logger: logger) { push, device in
            let uniqueID = PushService.newAPNsID()
            switch await admission.admit(push, to: device, uniqueID: uniqueID, completion: nil) {
            case .refused(let error): return error
            case .running, .held:
                acknowledgements.answered(uniqueID, written: true)
                return nil
            }
        }
    }

    /// The channel store at its default place (``ChannelStore/defaultPath(devices:folder:)``); nil, said in a
    /// warning, when it cannot be opened (the channel and broadcast routes then answer 500).
    private static func openChannels(devices: [Device], folder: [DeviceFolder.Entry], logger: Logger) -> ChannelStore? {
        guard let path = ChannelStore.defaultPath(devices: devices, folder: folder) else { return nil }
        do { return try ChannelStore(path: path) } catch {
            logger.warning("channel store not opened", metadata: ["store.error": .string("\(error)")])
            return nil
        }
    }

    /// Whether a 200 carries `apns-unique-id`: APNs sends it only in its development (sandbox) environment, for
    /// the delivery log of Apple's Push Notifications Console.
    public var sendsUniqueID: Bool { environment == .development }

    /// The default `--request-log`: requests kept for `GET /v1/requests`.
    public static let defaultRequestLogCapacity = 10_000

    /// The default `--concurrency`: twice the cores.
    public static var defaultConcurrency: Int { 2 * System.coreCount }

    /// A new lowercase UUID, as APNs generates for a push without `apns-id`.
    public static func newAPNsID() -> String {
        ((try? SecureRandom.uuid()) ?? "00000000-0000-4000-8000-000000000000").lowercased()
    }

    /// The device owning `token` (remote or voip token, hex, case-insensitive).
    /// A device whose `device.json` now says otherwise about being online (`nse device set --online`) is taken
    /// offline or brought back here, on the first lookup that reads the change.
    public func device(for token: String) -> Device? {
        guard let device = devices.device(for: token) else { return nil }
        offline.follow(device)
        return device
    }

    /// Records a push and queues it for delivery; `completion` gets the result once it is recorded.
    ///
    /// The push is in the store (its transaction committed) before this returns `nil`, so a 200 is never given
    /// for a push that is not on disk. Then `uniqueID`'s answer is watched (``Acknowledgements``).
    /// - Returns: `nil` once recorded and queued; else APNs's answer: 429 `TooManyRequests` when full, 503
    ///   `Shutdown` when stopping, 500 `InternalServerError` when the store cannot write (full disk, read-only).
    public func enqueue(
        _ push: AcceptedPush, to device: Device, uniqueID: String, completion: (@Sendable (JSON) -> Void)? = nil
    ) async -> APNsError? {
        switch await admission.admit(push, to: device, uniqueID: uniqueID, completion: completion) {
        case .refused(let error): return error
        case .running, .held: return nil
        }
    }

    /// Queues a push and waits for its recorded result, or APNs's answer when it could not be queued.
    public func deliverAndWait(_ push: AcceptedPush, to device: Device, uniqueID: String) async -> Result<
        JSON, APNsError
    > {
        let (results, continuation) = AsyncStream.makeStream(of: JSON.self, bufferingPolicy: .bufferingNewest(1))
        switch await admission.admit(
            push, to: device, uniqueID: uniqueID,
            completion: { result in
                continuation.yield(result)
                continuation.finish()
            })
        {
        case .refused(let refusal): return .failure(refusal)
        case .running: break
        case .held:
            // Delivered when the device is back, maybe never: the answer says so now instead of waiting.
            continuation.finish()
            return .success([
                "apns_id": .string(push.apnsID), "apns_unique_id": .string(uniqueID), "outcome": .null,
                "held_offline": true,
            ])
        }
        for await result in results { return .success(result) }
        return .failure(.internalServerError)
    }

    /// Takes a device offline (its pushes are held from now on) or brings it back: what was held for it is
    /// delivered, oldest first, each through its extension; a push whose `apns-expiration` passed meanwhile is
    /// recorded `expired`. Saves the device's `device.json` so the state outlives the server.
    public func setOnline(_ online: Bool, device: Device) throws(DeviceError) {
        try offline.setOnline(online, device: device)
    }

    /// How many pushes the device's offline storage holds now (at most one per topic).
    public func heldCount(for device: Device) -> Int {
        offline.count(for: device)
    }

    /// The 503 the channel and broadcast routes answer while the server plays unavailable: the fleet's switch in a
    /// fleet (500 `InternalServerError` when its database does not answer), else this node's.
    func channelsUnavailable() async -> APNsError? {
        guard let fleet else { return faults.unavailable }
        do { return try await fleet.unavailable().map { APNsError(503, $0) } } catch {
            logger.error("unavailable switch not read", metadata: ["fleet.error": .string(error.description)])
            return .internalServerError
        }
    }

    /// Writes a request to the request log: the fleet's when there is one (a failure is logged, the answer stands),
    /// else this node's.
    func logRequest(_ entry: RequestLog.Entry) async {
        guard let fleet else { return requests.record(entry) }
        do { try await fleet.record(entry) } catch {
            logger.error("request not logged", metadata: ["fleet.error": .string(error.description)])
        }
    }

    /// Queues again every push a previous run of the server answered 200 and never finished, as read when this
    /// service was made (never a push of this run); new pushes meanwhile get 429 until the backlog drains. Results
    /// say `"redelivered": true`; a push whose `apns-expiration` passed in the meantime is recorded `expired`.
    /// Returns how many it queued; a second call finds nothing left.
    @discardableResult
    public func resumeUnfinished() -> Int {
        // Broadcasts a previous run answered 200 and did not hand out go out again (docs/serve.md).
        broadcasts.fanOut?.resume()
        return unfinished.resume(queue: queue, offline: offline, runner: runner)
    }

    /// One page of a device's recorded results (``ResultStore/results(for:limit:since:before:)``), read on the
    /// store's threads: SQLite waits for the disk there, never on a cooperative thread.
    public func results(
        for device: Device, limit: Int, since: Int64, before: Int64 = .max
    ) async throws -> [JSON] {
        try await storeThreads.runIfActive { [store] in
            try store.results(for: device, limit: limit, since: since, before: before)
        }
    }

    /// Stops taking pushes, waits for every accepted one to be recorded and its callback sent, and ends the
    /// event streams.
    public func drain() async {
        // A broadcast being handed out gets its pushes admitted first; the queue then runs them.
        await broadcasts.drain()
        // Low-priority pushes waiting for their burst go now: they were answered 200.
        lowPriority?.close()
        await queue.drain()
        // No push runs any more: the warm extension processes are evicted, as iOS evicts them.
        extensionProcesses?.evictAll()
        forkServers?.stopAll()
        await callbacks.drain()
        try? await storeThreads.shutdownGracefully()
        events.close()
    }
}
