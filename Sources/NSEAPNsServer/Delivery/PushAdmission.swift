import Logging
import NIOPosix
import NSEDevice
import NSEJSON
import NSESystem

/// Takes an accepted push from APNs's rules to its run: a queue slot, its row committed before any 200, its answer
/// watched, then held for an offline device, kept for its low-priority burst, or queued.
struct PushAdmission: Sendable {
    let queue: DeliveryQueue
    let store: ResultStore
    /// Where the row is committed: SQLite waits for the disk there, never on an event loop or a cooperative thread.
    let storeThreads: NIOThreadPool
    let acknowledgements: Acknowledgements
    let offline: OfflineDevices
    /// Low-priority pushes waiting for their burst (`--low-priority-interval`); nil: they go at once.
    let lowPriority: LowPriorityBatch?
    let runner: PushRunner
    let logger: Logger

    /// Devices being given back to another node of a fleet admit nothing more here.
    private var activity: DeviceActivity { runner.activity }

    /// What became of an accepted push: refused with APNs's answer, running (queued or in its burst), or held for its
    /// offline device (`completion` is then not called).
    enum Admission {
        case refused(APNsError)
        case running
        case held
    }

    /// Refused: 429 `TooManyRequests` when full, 503 `Shutdown` when stopping, 500 `InternalServerError` when the
    /// store cannot write (full disk, read-only), 503 `ServiceUnavailable` when the device is being given back to
    /// another node of the fleet. Otherwise the push is on disk before this returns.
    func admit(
        _ push: AcceptedPush, to device: Device, uniqueID: String, completion: (@Sendable (JSON) -> Void)?
    ) async -> Admission {
        // Counted until its row is written and it is queued or held: a handback waits for it, so the node taking
        // the device back finds the row.
        guard activity.enter(device.directory) else { return .refused(.serviceUnavailable) }
        defer { activity.exit(device.directory) }
        let record = AcceptedPushRecord(push: push, uniqueID: uniqueID, receivedAt: SystemClock.unixMilliseconds())
        let acceptedAt = SystemClock.monotonicNanoseconds()
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
                    "apns.id": .string(push.apnsID), "device.token": .string(push.token.lowercased()),
                    "store.error": .string("\(error)"),
                ])
            return .refused(.internalServerError)
        }
        acknowledgements.expect(uniqueID, row: row, device: device)
        let recorded = RecordedPush(
            record: record, row: row, device: device, acceptedAt: acceptedAt, completion: completion)
        switch offline.hold(recorded) {
        case .deliver:
            // APNs may deliver low-priority pushes late and in bursts, to spare the device's power.
            if push.priority < 10, let lowPriority, lowPriority.add(recorded) {
                queue.release()
                return .running
            }
            runner.run(recorded)
            return .running
        case .held:
            queue.release()
            return .held
        case .dropped, .keptOlder, .droppedLowPriority:
            // Recorded undelivered at once: its result is final.
            queue.release()
            return .running
        }
    }
}
