import Logging
import NSEDevice
import NSESystem
import Synchronization

/// The pushes a previous run of the server answered 200 and never finished (it crashed, was killed, or lost power in
/// between), read before this run accepts any, and run once.
final class UnfinishedPushes: Sendable {
    private struct Unfinished: Sendable {
        let device: Device
        let row: ResultStore.Row
        let record: AcceptedPushRecord
    }

    private let pending: Mutex<[Unfinished]>
    private let logger: Logger

    /// Opens the devices' results databases now and reads what they left unfinished. A database that cannot be
    /// opened is tried again on its devices' first push (which gets a 500 if it still cannot): said at start-up.
    init(devices: [Device], store: ResultStore, logger: Logger) {
        let (found, failed) = store.unfinished(for: devices)
        for (device, error) in failed {
            logger.warning(
                "results database not ready",
                metadata: ["device.folder": .string(device.directory), "store.error": .string("\(error)")])
        }
        self.pending = Mutex(found.map { Unfinished(device: $0.device, row: $0.row, record: $0.record) })
        self.logger = logger
    }

    /// Queues them again, oldest first per device, as APNs delivers what it accepted once the device is reachable;
    /// an offline device's are held again (the newest per topic). They were admitted before, so they take their
    /// slots even past `--queue`; once the server is stopping the rest stay for its next start. Returns how many it
    /// queued; a second call finds nothing left.
    func resume(queue: DeliveryQueue, offline: OfflineDevices, runner: PushRunner) -> Int {
        let unfinished = pending.withLock { pending -> [Unfinished] in
            defer { pending = [] }
            return pending
        }
        if !unfinished.isEmpty {
            logger.notice(
                "running pushes accepted before the server stopped", metadata: ["push.count": "\(unfinished.count)"])
        }
        var resumed = 0
        for push in unfinished {
            var recorded = RecordedPush(
                record: push.record, row: push.row, device: push.device,
                acceptedAt: SystemClock.monotonicNanoseconds())
            guard case .deliver = offline.hold(recorded) else { continue }
            guard queue.readmit() else { break }
            recorded.late = .restarted
            runner.run(recorded)
            resumed += 1
        }
        return resumed
    }
}
