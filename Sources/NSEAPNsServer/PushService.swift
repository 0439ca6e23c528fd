public import Logging
import NIOCore
import NIOPosix
import NSECrypto
import NSEDatabase
public import NSEDevice
public import NSEHost
public import NSEJSON
import NSEPayload
import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The part of `nse serve` that is not HTTP: the registered devices, provider authentication, the bounded
/// delivery queue, the result store, the live event feed, result callbacks and the per-notification log line.
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
    public let extensionCommand: [String]
    public let limits: ExtensionLimits
    /// Warm extension processes, one per device, kept between pushes (`--extension-process warm`); nil: a fresh
    /// process per push.
    public let extensionProcesses: ExtensionProcessPool?
    /// The faults injected now (`--fault`, `/v1/control/faults`, `/v1/control/unavailable`).
    public let faults: APNsFaultPlan
    /// Every `POST /3/device` as received and answered (`GET /v1/requests`).
    public let requests: RequestLog
    /// What APNs keeps for the devices that are offline.
    let held: HeldPushes
    /// Low-priority pushes waiting for their burst (`--low-priority-interval`); nil: they go at once.
    let lowPriority: LowPriorityBatch?

    /// Why a push runs later than it was accepted.
    enum Lateness: Sendable {
        /// Its device was offline.
        case heldOffline
        /// A low-priority push, delivered with the others of its burst.
        case burst
    }
    public let logger: Logger
    /// A push a previous run of the server accepted and never ran.
    struct Unfinished: Sendable {
        let device: Device
        let row: ResultStore.Row
        let record: AcceptedPushRecord
    }

    /// The pushes a previous run left unrun, read when this service was made; handed once to ``resumeUnfinished()``.
    private let unfinishedAtStart: Mutex<[Unfinished]>

    /// Threads for the result store's writes that are not part of a delivery (recording an accepted push, marking
    /// an answer lost): SQLite waits for the disk, never on an event loop or a cooperative thread.
    private let storeThreads: NIOThreadPool

    /// A service dropped without a drain (an embedding that never stops it, a test) still lets its threads end.
    deinit {
        storeThreads.shutdownGracefully { _ in }
    }

    /// - Parameters:
    ///   - devices: devices opened already (`--device`): their databases are opened now.
    ///   - folder: the devices of `--devices` folders: indexed by token, opened on first use; a database is opened
    ///     now only where one exists (to find pushes a previous run left unrun).
    public init(
        devices: [Device], folder: [DeviceFolder.Entry] = [], concurrency: Int, queueCapacity: Int,
        extensionCommand: [String],
        limits: ExtensionLimits = ExtensionLimits(), extensionProcesses: ExtensionProcessPool? = nil,
        authentication: ProviderAuthentication? = nil, certificates: CertificateAuthentication? = nil,
        faults: APNsFaultPlan = APNsFaultPlan(),
        requestLogCapacity: Int = PushService.defaultRequestLogCapacity, lowPriorityInterval: Double = 0,
        openDatabases: Int = ResultStore.defaultMaxOpen, logger: Logger
    ) {
        let registry = DeviceRegistry(devices: devices, folder: folder)
        self.devices = registry
        self.queue = DeliveryQueue(concurrency: concurrency, capacity: queueCapacity)
        let store = ResultStore(logger: logger, maxOpen: openDatabases)
        var unfinished: [Unfinished] = []
        let used = folder.filter { FileSystem.exists(Path.join($0.directory, "notifications", "results.db")) }
            .compactMap { registry.device(for: $0.remoteToken) }
        for device in devices + used {
            // A device whose database cannot be opened now is tried again on its first push (which gets a 500 if
            // it still cannot): say so at start-up.
            do {
                try store.prepare(device)
                // Read now, before any push of this run is accepted: only a previous run's pushes are rerun.
                unfinished += try store.unfinished(for: device).map { Unfinished(device: device, row: $0, record: $1) }
            } catch {
                logger.warning(
                    "results database not ready",
                    metadata: ["device": .string(device.directory), "store-error": .string("\(error)")])
            }
        }
        self.unfinishedAtStart = Mutex(unfinished)
        let storeThreads = NIOThreadPool(numberOfThreads: 2)
        storeThreads.start()
        self.store = store
        self.storeThreads = storeThreads
        self.acknowledgements = Acknowledgements { row, device in
            storeThreads.submit { _ in
                do {
                    try store.markUnacknowledged(row, for: device)
                    logger.warning(
                        "answer not delivered: push recorded as not acknowledged",
                        metadata: ["row": .stringConvertible(row.id)])
                } catch {
                    logger.error(
                        "answer not delivered, and not marked",
                        metadata: ["row": .stringConvertible(row.id), "store-error": .string("\(error)")])
                }
            }
        }
        self.events = EventHub()
        self.callbacks = ResultCallbacks(logger: logger)
        self.authentication = authentication
        self.certificates = certificates
        self.extensionCommand = extensionCommand
        self.limits = limits
        self.extensionProcesses = extensionProcesses
        self.faults = faults
        self.held = HeldPushes(
            offline: devices.filter { !$0.config.online }.map(\.directory)
                + folder.filter { !$0.online }.map(\.directory))
        self.requests = RequestLog(capacity: requestLogCapacity)
        self.logger = logger
        self.lowPriority = lowPriorityInterval > 0 ? LowPriorityBatch(interval: lowPriorityInterval) : nil
        lowPriority?.deliver = { [weak self] burst in self?.release(burst, late: .burst) }
    }

    /// The default `--request-log`: requests kept for `GET /v1/requests`.
    public static let defaultRequestLogCapacity = 10_000

    /// The default `--concurrency`: twice the cores.
    public static var defaultConcurrency: Int { 2 * System.coreCount }

    /// The device owning `token` (remote or voip token, hex, case-insensitive).
    /// A device whose `device.json` now says otherwise about being online (`nse device set --online`) is taken
    /// offline or brought back here, on the first lookup that reads the change.
    public func device(for token: String) -> Device? {
        guard let device = devices.device(for: token) else { return nil }
        if held.isOffline(device.directory) == device.config.online { applyOnline(device.config.online, to: device) }
        return device
    }

    /// A new lowercase UUID, as APNs generates for a push without `apns-id`.
    public static func newAPNsID() -> String {
        ((try? SecureRandom.uuid()) ?? "00000000-0000-4000-8000-000000000000").lowercased()
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
        switch await admit(push, to: device, uniqueID: uniqueID, completion: completion) {
        case .refused(let error): return error
        case .running, .held: return nil
        }
    }

    /// What became of an accepted push: refused with APNs's answer, running (queued), or held for its offline
    /// device (`completion` is then not called).
    enum Admission {
        case refused(APNsError)
        case running
        case held
    }

    private func admit(
        _ push: AcceptedPush, to device: Device, uniqueID: String, completion: (@Sendable (JSON) -> Void)?
    ) async -> Admission {
        let record = AcceptedPushRecord(push: push, uniqueID: uniqueID, receivedAt: SystemClock.unixMilliseconds())
        let accepted = SystemClock.monotonicNanoseconds()
        switch queue.reserve() {
        case .accepted: break
        case .full: return .refused(.tooManyRequests)
        case .closed: return .refused(.shutdown)
        }
        let row: ResultStore.Row
        do {
            row = try await storeThreads.runIfActive { [store] in try store.accept(record, for: device) }
        } catch {
            queue.release()
            logger.error(
                "push refused: not recorded",
                metadata: [
                    "apns-id": .string(push.apnsID), "token": .string(push.token.lowercased()),
                    "store-error": .string("\(error)"),
                ])
            return .refused(.internalServerError)
        }
        acknowledgements.expect(uniqueID, row: row, device: device)
        let push = HeldPushes.Held(record: record, row: row, device: device, acceptedAt: accepted)
        switch holdIfOffline(push, completion: completion) {
        case .deliver:
            // APNs may deliver low-priority pushes late and in bursts, to spare the device's power.
            if record.push.priority < 10, let lowPriority {
                var waiting = push
                waiting.completion = completion
                if lowPriority.add(waiting) {
                    queue.release()
                    return .running
                }
            }
            run(record, row: row, on: device, acceptedAt: accepted, completion: completion)
            return .running
        case .held:
            queue.release()
            return .held
        case .dropped:
            queue.release()
            return .running
        }
    }

    /// Holds `push` if its device is offline, as APNs stores it, recording the push it replaces or, for
    /// `apns-expiration: 0`, the push itself as dropped (`completion` told then). `.deliver`: the device is online.
    private func holdIfOffline(
        _ push: HeldPushes.Held, completion: (@Sendable (JSON) -> Void)? = nil
    ) -> HeldPushes.Holding {
        let holding = held.hold(push, storable: push.record.push.expiration != 0)
        switch holding {
        case .deliver: break
        case .held(let replaced): if let replaced { drop(replaced, by: push.record.push) }
        case .dropped: drop(push, by: nil, completion: completion)
        }
        return holding
    }

    /// Records a push the offline device will never get: `apns-expiration: 0` ("now or never") while it was
    /// offline, or an older push `newer` replaced (APNs keeps one per app). On a store thread: it may wait for the
    /// disk.
    private func drop(
        _ push: HeldPushes.Held, by newer: AcceptedPush?, completion: (@Sendable (JSON) -> Void)? = nil
    ) {
        let result: NotificationResult
        if let newer {
            let why =
                newer.collapseID != nil && newer.collapseID == push.record.push.collapseID
                ? "a newer push with the same apns-collapse-id replaced it while the device was offline"
                : "a newer push for the same app came while the device was offline: APNs keeps only the newest"
            result = NotificationResult(
                outcome: .replaced, reason: why, requestID: push.record.push.apnsID,
                pushType: push.record.push.pushType)
        } else {
            result = NotificationResult(
                outcome: .expired,
                reason: ReasonCode.apnsExpiration.reason(
                    "0 (now or never) and the device was offline; APNs discards it undelivered"),
                requestID: push.record.push.apnsID, pushType: push.record.push.pushType)
        }
        storeThreads.submit { [self] _ in
            finish(
                result, record: push.record, row: push.row, on: push.device, acceptedAt: push.acceptedAt,
                completion: completion)
        }
    }

    /// Takes a device offline (its pushes are held from now on) or brings it back: what was held for it is
    /// delivered, oldest first, each through its extension; a push whose `apns-expiration` passed meanwhile is
    /// recorded `expired`. Saves the device's `device.json` so the state outlives the server.
    public func setOnline(_ online: Bool, device: Device) throws(DeviceError) {
        var device = device
        if device.config.online != online {
            device.config.online = online
            try device.save()
        }
        applyOnline(online, to: device)
    }

    /// Runs pushes that waited (a device back online, a burst of low-priority pushes), oldest first; once
    /// stopping, what cannot be admitted stays in the store, unfinished, for the next start.
    /// - Parameter device: the device as it is now, if it was re-read since the pushes waited.
    private func release(_ pushes: [HeldPushes.Held], late: Lateness, on device: Device? = nil) {
        for push in pushes {
            guard queue.readmit() else { break }
            run(
                push.record, row: push.row, on: device ?? push.device, acceptedAt: push.acceptedAt, late: late,
                completion: push.completion)
        }
    }

    /// How many pushes the device's offline storage holds now (at most one per topic).
    public func heldCount(for device: Device) -> Int {
        held.count(device.directory)
    }

    private func applyOnline(_ online: Bool, to device: Device) {
        let released = held.setOnline(online, directory: device.directory)
        if !released.isEmpty {
            logger.info(
                "device back online: delivering what APNs kept",
                metadata: ["device": .string(device.directory), "pushes": "\(released.count)"])
        }
        release(released, late: .heldOffline, on: device)
    }

    /// Queues again every push a previous run of the server answered 200 and never finished (it crashed, was
    /// killed, or lost power in between), oldest first per device, as APNs delivers what it accepted once the
    /// device is reachable. Only what was unfinished when this service was made: never a push of this run. They
    /// were admitted before, so they take their slots even past `--queue` (new pushes meanwhile get 429 until the
    /// backlog drains); once the server is stopping the rest stay for its next start. Results say
    /// `"redelivered": true`; a push whose `apns-expiration` passed in the meantime is recorded `expired`. Returns
    /// how many it queued; a second call finds nothing left.
    @discardableResult
    public func resumeUnfinished() -> Int {
        let unfinished = unfinishedAtStart.withLock { pending -> [Unfinished] in
            defer { pending = [] }
            return pending
        }
        if !unfinished.isEmpty {
            logger.notice(
                "running pushes accepted before the server stopped", metadata: ["pushes": "\(unfinished.count)"])
        }
        var resumed = 0
        for push in unfinished {
            // An offline device's pushes are held again, the newest per topic (replacing, as when they came).
            let kept = HeldPushes.Held(
                record: push.record, row: push.row, device: push.device, acceptedAt: SystemClock.monotonicNanoseconds())
            guard case .deliver = holdIfOffline(kept) else { continue }
            guard queue.readmit() else { break }
            run(
                push.record, row: push.row, on: push.device, acceptedAt: SystemClock.monotonicNanoseconds(),
                redelivered: true)
            resumed += 1
        }
        return resumed
    }

    /// Delivers a recorded push in the slot it holds, records its result, and tells the log, the event stream, the
    /// device's callback and `completion`.
    /// - Parameter late: held until now (for an offline device, or for a burst of low-priority pushes): its
    ///   expiration is judged now, as a redelivery's.
    private func run(
        _ record: AcceptedPushRecord, row: ResultStore.Row, on device: Device, acceptedAt accepted: UInt64,
        redelivered: Bool = false, late: Lateness? = nil, completion: (@Sendable (JSON) -> Void)? = nil
    ) {
        let push = record.push
        let receivedAt = record.receivedAt
        queue.run { [self] in
            let queuedMilliseconds = SystemClock.millisecondsSince(accepted)
            // APNs drops a push whose expiration date has passed instead of delivering it; 0 means "now or never".
            // A push run again after a restart is judged now: it may have expired while the server was down.
            let deliveredAt = redelivered || late != nil ? SystemClock.unixMilliseconds() : receivedAt
            let expired = push.expiration.map { $0 != 0 && $0 * 1000 < deliveredAt } ?? false
            let result: NotificationResult
            if expired {
                let when =
                    redelivered
                    ? "when the server ran it again after a restart"
                    : late == .heldOffline
                        ? "when the device came back online"
                        : late == .burst ? "when its burst of low-priority pushes went" : "when the push arrived"
                result = NotificationResult(
                    outcome: .expired,
                    reason: ReasonCode.apnsExpiration.reason(
                        "\(push.expiration ?? 0) had passed \(when); APNs discards it undelivered"),
                    requestID: push.apnsID, pushType: push.pushType)
            } else {
                var host = NotificationHost(device: device, limits: limits, extensionCommand: extensionCommand)
                host.extensionProcesses = extensionProcesses
                let (store, logger) = (self.store, self.logger)
                result = host.deliver(
                    push.payload, pushType: push.pushType, source: .webhook, keptContent: record.handover,
                    keepContent: { handover in
                        do {
                            try store.keep(handover, of: row, for: device)
                            return true
                        } catch {
                            // Not acknowledged: the extension keeps its messages and a later push shows them again.
                            logger.warning(
                                "delivered content not kept",
                                metadata: ["apns-id": .string(push.apnsID), "store-error": .string("\(error)")])
                            return false
                        }
                    })
            }
            finish(
                result, record: record, row: row, on: device, acceptedAt: accepted,
                queuedMilliseconds: queuedMilliseconds,
                redelivered: redelivered, late: late, completion: completion)
        }
    }

    /// Completes a push's result document, records it, and tells the log, the event stream, the device's callback
    /// and `completion`. Runs on a delivery or store thread: it may wait for the disk.
    private func finish(
        _ result: NotificationResult, record: AcceptedPushRecord, row: ResultStore.Row, on device: Device,
        acceptedAt accepted: UInt64, queuedMilliseconds: Double? = nil, redelivered: Bool = false,
        late: Lateness? = nil,
        completion: (@Sendable (JSON) -> Void)? = nil
    ) {
        let push = record.push
        let receivedAt = record.receivedAt
        let uniqueID = record.uniqueID
        let queuedMilliseconds = queuedMilliseconds ?? SystemClock.millisecondsSince(accepted)
        var object = result.json.objectValue ?? JSONObject()
        object["apns_id"] = .string(push.apnsID)
        object["apns_unique_id"] = .string(uniqueID)
        object["token"] = .string(push.token.lowercased())
        object["received_at"] = .int(receivedAt)
        object["queued_ms"] = .double(NotificationResult.rounded(queuedMilliseconds))
        if let collapseID = push.collapseID { object["collapse_id"] = .string(collapseID) }
        if redelivered { object["redelivered"] = true }
        switch late {
        case .heldOffline?: object["held_offline"] = true
        case .burst?: object["delivered_in_burst"] = true
        case nil: break
        }
        let latencyMilliseconds = SystemClock.millisecondsSince(accepted)
        object["latency_ms"] = .double(NotificationResult.rounded(latencyMilliseconds))
        object["recorded_at"] = .int(SystemClock.unixMilliseconds())
        let recorded = JSON.object(object)
        var metadata: Logger.Metadata = [
            "apns-id": .string(push.apnsID), "token": .string(push.token.lowercased()),
            "push-type": .string(push.pushType.rawValue), "outcome": .string(result.outcome.rawValue),
            "queued-ms": .string(Self.format(queuedMilliseconds)),
        ]
        for (name, milliseconds) in result.timings { metadata["\(name)-ms"] = .string(Self.format(milliseconds)) }
        if let killed = result.extensionReport?.killed { metadata["killed"] = .string(killed) }
        do {
            try recordResult(row, result: recorded, for: device)
        } catch {
            metadata["store-error"] = .string("\(error)")
            logger.error("notification result not recorded", metadata: metadata)
            completion?(recorded)
            return
        }
        metadata["latency-ms"] = .string(Self.format(latencyMilliseconds))
        logger.info("notification", metadata: metadata)
        events.publish(
            "notification", recorded,
            tokens: [device.config.remoteToken.lowercased(), device.config.voipToken.lowercased()])
        if let url = device.config.callbackURL { callbacks.post(recorded, to: url, apnsID: push.apnsID) }
        completion?(recorded)
    }

    /// How long a result waits for the store when the disk is full or the file is locked or unwritable: while the
    /// server runs, long enough for an operator to free space; once it is stopping, short enough for its 5 s.
    static let recordPatience: (running: Double, stopping: Double) = (running: 120, stopping: 1.5)

    /// Fills the push's row with its result, trying again (50 ms, doubling to 1 s) while the store fails for a
    /// reason that can pass (a full disk, a lock, a file made read-only, an I/O error); a push answered 200 must
    /// not lose its result to a moment without room. Gives up on a corrupt or newer file, or when patience ends.
    /// Runs on a delivery thread: it may block.
    private func recordResult(_ row: ResultStore.Row, result: JSON, for device: Device) throws(DatabaseError) {
        let started = SystemClock.monotonicNanoseconds()
        var stoppingSince: UInt64?
        var pause: UInt32 = 50_000
        while true {
            do {
                return try store.complete(row, result: result, for: device)
            } catch {
                switch error.code {
                case .corrupt, .newerSchema, .constraint: throw error
                case .full, .busy, .readOnly, .cannotOpen, .other: break
                }
                if stoppingSince == nil, !queue.isAccepting { stoppingSince = SystemClock.monotonicNanoseconds() }
                let waited = Double(SystemClock.monotonicNanoseconds() - (stoppingSince ?? started)) / 1e9
                if waited >= (stoppingSince == nil ? Self.recordPatience.running : Self.recordPatience.stopping) {
                    throw error
                }
                if pause == 50_000 {
                    logger.warning(
                        "result not recorded yet: trying again",
                        metadata: ["row": .stringConvertible(row.id), "store-error": .string("\(error)")])
                }
                usleep(pause)
                pause = min(pause * 2, 1_000_000)
            }
        }
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

    /// Queues a push and waits for its recorded result, or APNs's answer when it could not be queued.
    public func deliverAndWait(_ push: AcceptedPush, to device: Device, uniqueID: String) async -> Result<
        JSON, APNsError
    > {
        let (results, continuation) = AsyncStream.makeStream(of: JSON.self, bufferingPolicy: .bufferingNewest(1))
        switch await admit(
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

    /// Stops taking pushes, waits for every accepted one to be recorded and its callback sent, and ends the
    /// event streams.
    public func drain() async {
        // Low-priority pushes waiting for their burst go now: they were answered 200.
        lowPriority?.close()
        await queue.drain()
        // No push runs any more: the warm extension processes are evicted, as iOS evicts them.
        extensionProcesses?.evictAll()
        await callbacks.drain()
        try? await storeThreads.shutdownGracefully()
        events.close()
    }

    static func format(_ milliseconds: Double) -> String {
        let tenths = Int((milliseconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
