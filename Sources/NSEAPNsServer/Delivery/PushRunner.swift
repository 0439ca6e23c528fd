import Logging
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESystem

/// Runs recorded pushes through the host on the delivery queue's threads, never on an event loop, and hands each
/// result to the ``ResultRecorder``.
struct PushRunner: Sendable {
    let queue: DeliveryQueue
    let store: ResultStore
    let recorder: ResultRecorder
    let extensionCommand: [String]
    let limits: ExtensionLimits
    let extensionProcesses: ExtensionProcessPool?
    let forkServers: ExtensionForkServers?
    /// `--record DIR`: each push that runs is written as a replay case.
    let recording: CaseRecording?
    /// Where `liveactivity` pushes go instead of the host: the device's ActivityKit state, no extension.
    let liveActivities: LiveActivityDelivery
    /// Devices with a push running, and those given back to another node of a fleet (whose pushes are left unrun).
    let activity: DeviceActivity
    let logger: Logger

    /// Delivers `push` in the queue slot it holds. A push whose expiration date has passed is recorded `expired`
    /// instead (APNs drops it; 0 means "now or never"); a late one is judged when it runs, not when it came.
    func run(_ push: RecordedPush) {
        queue.run { [self] in
            // A device given back to the fleet's node that serves it again: that node runs the push from its row.
            guard activity.enter(push.device.directory) else { return leftUnrun(push) }
            defer { activity.exit(push.device.directory) }
            let queuedMilliseconds = SystemClock.millisecondsSince(push.acceptedAt)
            let accepted = push.record.push
            let deliveredAt = push.late != nil ? SystemClock.unixMilliseconds() : push.record.receivedAt
            let expired = accepted.expiration.map { $0 != 0 && $0 * 1000 < deliveredAt } ?? false
            let result: NotificationResult
            var snapshot: DeviceSnapshot?
            if expired {
                let when =
                    switch push.late {
                    case .restarted?: "when the server ran it again after a restart"
                    case .heldOffline?: "when the device came back online"
                    case .burst?: "when its burst of low-priority pushes went"
                    case nil: "when the push arrived"
                    }
                result = NotificationResult(
                    outcome: .expired,
                    reason: ReasonCode.apnsExpiration.reason(
                        "\(accepted.expiration ?? 0) had passed \(when); APNs discards it undelivered"),
                    requestID: accepted.apnsID, pushType: accepted.pushType)
            } else if accepted.pushType == .liveactivity {
                result = liveActivities.deliver(push)
            } else {
                // Read before the run: the extension changes what the device holds.
                if let recording, recording.isEnabled {
                    snapshot = recording.snapshot(push.device, payload: accepted.payload)
                }
                result = deliver(push, recordSIP: snapshot == nil ? nil : recording?.sipMode)
            }
            recorder.finish(result, for: push, queuedMilliseconds: queuedMilliseconds, snapshot: snapshot)
        }
    }

    /// A push of a device this node gave back, left in its row for the node that serves the device now (which runs
    /// it as a push a previous run left unrun); whoever waits for its result is told so.
    private func leftUnrun(_ push: RecordedPush) {
        logger.info(
            "push left for the node its device went back to",
            metadata: ["apns.id": .string(push.record.push.apnsID), "device.folder": .string(push.device.directory)])
        push.completion?([
            "apns_id": .string(push.record.push.apnsID), "apns_unique_id": .string(push.record.uniqueID),
            "outcome": .null, "handed_back": true,
        ])
    }

    /// Runs pushes that waited (a device back online, a burst of low-priority pushes), oldest first; once
    /// stopping, what cannot be admitted stays in the store, unfinished, for the next start.
    /// - Parameter device: the device as it is now, if it was re-read since the pushes waited.
    func release(_ pushes: [RecordedPush], late: RecordedPush.Lateness, on device: Device? = nil) {
        for var push in pushes {
            guard queue.readmit() else { break }
            push.late = late
            if let device { push.device = device }
            run(push)
        }
    }

    /// The host's delivery, the handover synced into the push's row before the extension hears it was accepted.
    private func deliver(_ push: RecordedPush, recordSIP: SIPRecordingMode?) -> NotificationResult {
        let (accepted, row, device) = (push.record.push, push.row, push.device)
        var host = NotificationHost(device: device, limits: limits, extensionCommand: extensionCommand)
        host.extensionProcesses = extensionProcesses
        host.extensionForkServers = forkServers
        host.recordSIP = recordSIP
        let (store, logger) = (self.store, self.logger)
        return host.deliver(
            accepted.payload, pushType: accepted.pushType, source: .webhook, collapseID: accepted.collapseID,
            keptContent: push.record.handover,
            keepContent: { handover in
                do {
                    try store.keep(handover, of: row, for: device)
                    return true
                } catch {
                    // Not acknowledged: the extension keeps its messages and a later push shows them again.
                    logger.warning(
                        "delivered content not kept",
                        metadata: ["apns.id": .string(accepted.apnsID), "store.error": .string("\(error)")])
                    return false
                }
            })
    }
}
