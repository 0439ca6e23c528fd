import Logging
import NSEDatabase
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The end of every push: its result document completed with APNs's fields, recorded, and told to the metrics, the
/// log, the event stream, the device's callback and whoever waits.
struct ResultRecorder: Sendable {
    let store: ResultStore
    let events: EventHub
    let callbacks: ResultCallbacks
    /// Tells whether the server is stopping, which shortens the patience with the store.
    let queue: DeliveryQueue
    /// `--record DIR`, and the limits its cases state.
    let recording: CaseRecording?
    let limits: ExtensionLimits
    let metrics: ServeMetrics
    let logger: Logger
    /// `--database`: each result is copied to the fleet after its device's store took it, for every node to read.
    var fleet: (any FleetState)? = nil

    /// How long a result waits for the store when the disk is full or the file is locked or unwritable: while the
    /// server runs, long enough for an operator to free space; once it is stopping, short enough for its 5 s.
    static let patience: (running: Double, stopping: Double) = (running: 120, stopping: 1.5)

    /// Completes `push`'s result document, records it, and tells the log, the event stream, the device's callback
    /// and `push.completion`. Runs on a delivery or store thread: it may wait for the disk.
    /// - Parameters:
    ///   - queuedMilliseconds: from acceptance to the start of the run; nil: until now (never run).
    ///   - snapshot: the device as the push met it, when the push is recorded as a replay case.
    func finish(
        _ result: NotificationResult, for push: RecordedPush, queuedMilliseconds: Double? = nil,
        snapshot: DeviceSnapshot? = nil
    ) {
        let accepted = push.record.push
        let queuedMilliseconds = queuedMilliseconds ?? SystemClock.millisecondsSince(push.acceptedAt)
        var object = result.json.objectValue ?? JSONObject()
        let exchange = RecordedCase.takeExchange(from: &object)
        // The page's "save as case" link: the case is written once the result is recorded.
        if recording != nil, snapshot != nil { object["case"] = .string(RecordedCase.name(for: push)) }
        object["apns_id"] = .string(accepted.apnsID)
        object["apns_unique_id"] = .string(push.record.uniqueID)
        object["token"] = .string(accepted.token.lowercased())
        object["received_at"] = .int(push.record.receivedAt)
        object["queued_ms"] = .double(NotificationResult.rounded(queuedMilliseconds))
        if let collapseID = accepted.collapseID { object["collapse_id"] = .string(collapseID) }
        switch push.late {
        case .restarted?: object["redelivered"] = true
        case .heldOffline?: object["held_offline"] = true
        case .burst?: object["delivered_in_burst"] = true
        case nil: break
        }
        if let liberty = push.liberty { object["store_liberty"] = .string(liberty.rawValue) }
        let latencyMilliseconds = SystemClock.millisecondsSince(push.acceptedAt)
        object["latency_ms"] = .double(NotificationResult.rounded(latencyMilliseconds))
        object["recorded_at"] = .int(SystemClock.unixMilliseconds())
        let recorded = JSON.object(object)
        var metadata: Logger.Metadata = [
            "apns.id": .string(accepted.apnsID), "device.token": .string(accepted.token.lowercased()),
            "apns.push_type": .string(accepted.pushType.rawValue), "push.outcome": .string(result.outcome.rawValue),
            "push.queued_ms": .string(Self.format(queuedMilliseconds)),
        ]
        for (name, milliseconds) in result.timings { metadata["push.\(name)_ms"] = .string(Self.format(milliseconds)) }
        if let killed = result.extensionReport?.killed { metadata["extension.killed"] = .string(killed) }
        // Counted whether or not the store takes it: the device got this outcome either way.
        metrics.recorded(result, pushType: accepted.pushType)
        do {
            try record(push.row, result: recorded, for: push.device)
        } catch {
            metadata["store.error"] = .string("\(error)")
            logger.error("notification result not recorded", metadata: metadata)
            push.completion?(recorded)
            return
        }
        fleet?.copyResult(
            recorded, row: push.row.id, device: push.device.config.remoteToken, apnsID: accepted.apnsID)
        metadata["push.latency_ms"] = .string(Self.format(latencyMilliseconds))
        logger.info("notification", metadata: metadata)
        if let recording, let snapshot {
            let recordedCase = RecordedCase(
                push: push, snapshot: snapshot, exchange: exchange, result: recorded, limits: limits,
                plaintext: recording.plaintext)
            do { try recording.write(recordedCase) } catch {
                logger.error(
                    "push not recorded as a case",
                    metadata: ["apns.id": .string(accepted.apnsID), "recording.error": .string("\(error)")])
            }
        }
        let device = push.device.config
        events.publish(
            "notification", recorded, tokens: [device.remoteToken.lowercased(), device.voipToken.lowercased()])
        if let url = device.callbackURL { callbacks.post(recorded, to: url, apnsID: accepted.apnsID) }
        push.completion?(recorded)
    }

    /// Fills the push's row with its result, trying again (50 ms, doubling to 1 s) while the store fails for a
    /// reason that can pass (a full disk, a lock, a file made read-only, an I/O error); a push answered 200 must
    /// not lose its result to a moment without room. Gives up on a corrupt or newer file, or when patience ends.
    private func record(_ row: ResultStore.Row, result: JSON, for device: Device) throws(DatabaseError) {
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
                if waited >= (stoppingSince == nil ? Self.patience.running : Self.patience.stopping) { throw error }
                if pause == 50_000 {
                    logger.warning(
                        "result not recorded yet: trying again",
                        metadata: ["store.row": .stringConvertible(row.id), "store.error": .string("\(error)")])
                }
                usleep(pause)
                pause = min(pause * 2, 1_000_000)
            }
        }
    }

    static func format(_ milliseconds: Double) -> String {
        let tenths = Int((milliseconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
