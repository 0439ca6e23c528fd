import Logging
import NIOPosix
import NSEDevice
import NSEHost
import NSEPayload

/// Devices going offline and coming back, as APNs sees them: a push for an offline device is held (``HeldPushes``),
/// the one it replaces or one that cannot wait is recorded undelivered, and a device back online gets what was held.
struct OfflineDevices: Sendable {
    let held: HeldPushes
    let runner: PushRunner
    let recorder: ResultRecorder
    /// Where undelivered pushes are recorded: it may wait for the disk.
    let storeThreads: NIOThreadPool
    let logger: Logger

    /// Holds `push` if its device is offline, as APNs stores it (without its completion: it is told the push is
    /// held), recording the push it replaces or, for `apns-expiration: 0`, the push itself as dropped (its
    /// completion told then); with the `apple` store the push itself may be the one not kept (an older one stays,
    /// or it is a low-priority push dropped). `.deliver`: the device is online.
    func hold(_ push: RecordedPush) -> HeldPushes.Holding {
        var kept = push
        kept.completion = nil
        let holding = held.hold(kept, storable: push.record.push.expiration != 0)
        switch holding {
        case .deliver: break
        case .held(let replaced): if let replaced { drop(replaced, by: push.record.push) }
        case .dropped: drop(push, by: nil)
        case .keptOlder:
            notKept(
                push, .replaced, liberty: .replaced,
                "an older push for the same app was already stored while the device was offline, and APNs kept it"
                    + " instead of this newer one (it keeps usually the latest, not always)")
        case .droppedLowPriority:
            notKept(
                push, .dropped, liberty: .droppedLowPriority,
                "apns-priority \(push.record.push.priority) and the device was offline; APNs may throttle or drop"
                    + " low-priority pushes, and dropped this one")
        }
        return holding
    }

    /// Records a push the `apple` store did not keep, and the liberty it took.
    private func notKept(
        _ push: RecordedPush, _ outcome: NotificationResult.Outcome, liberty: StoreLiberties.Liberty, _ why: String
    ) {
        var push = push
        push.liberty = liberty
        let accepted = push.record.push
        let result = NotificationResult(
            outcome: outcome, reason: ReasonCode.apnsStore.reason(why), requestID: accepted.apnsID,
            pushType: accepted.pushType)
        storeThreads.submit { [push, recorder] _ in recorder.finish(result, for: push) }
    }

    /// Records a push the offline device will never get: `apns-expiration: 0` ("now or never") while it was
    /// offline, or an older push `newer` replaced (APNs keeps one per app).
    private func drop(_ push: RecordedPush, by newer: AcceptedPush?) {
        let accepted = push.record.push
        let result: NotificationResult
        if let newer {
            let why =
                newer.collapseID != nil && newer.collapseID == accepted.collapseID
                ? "a newer push with the same apns-collapse-id replaced it while the device was offline"
                : "a newer push for the same app came while the device was offline: APNs keeps only the newest"
            result = NotificationResult(
                outcome: .replaced, reason: why, requestID: accepted.apnsID, pushType: accepted.pushType)
        } else {
            result = NotificationResult(
                outcome: .expired,
                reason: ReasonCode.apnsExpiration.reason(
                    "0 (now or never) and the device was offline; APNs discards it undelivered"),
                requestID: accepted.apnsID, pushType: accepted.pushType)
        }
        storeThreads.submit { [recorder] _ in recorder.finish(result, for: push) }
    }

    /// Takes a device offline (its pushes are held from now on) or brings it back: what was held for it is
    /// delivered, oldest first. Saves its `device.json` so the state outlives the server.
    func setOnline(_ online: Bool, device: Device) throws(DeviceError) {
        var device = device
        if device.config.online != online {
            device.config.online = online
            try device.save()
        }
        apply(online, to: device)
    }

    /// Follows a `device.json` that now says otherwise about being online (`nse device set --online`).
    func follow(_ device: Device) {
        if held.isOffline(device.directory) == device.config.online { apply(device.config.online, to: device) }
    }

    /// Devices this server takes over that are offline (their `device.json` says so).
    func adopt(offline directories: [String]) {
        held.add(offline: directories)
    }

    /// Devices given back to another node: what was held for them stays in their rows, for that node.
    func forget(_ directories: Set<String>) {
        held.forget(directories)
    }

    /// How many pushes the device's offline storage holds now (at most one per topic).
    func count(for device: Device) -> Int {
        held.count(device.directory)
    }

    private func apply(_ online: Bool, to device: Device) {
        let released = held.setOnline(online, directory: device.directory, config: device.config)
        if !released.isEmpty {
            logger.info(
                "device back online: delivering what APNs kept",
                metadata: ["device.folder": .string(device.directory), "push.count": "\(released.count)"])
        }
        runner.release(released, late: .heldOffline, on: device)
    }
}
