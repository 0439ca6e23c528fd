import Logging
import NSEDevice
import NSEPayload
import NSESystem
import Synchronization

/// Hands a broadcast to every Live Activity subscribed to its channel, on every served device of its app: one
/// `liveactivity` push per activity, admitted as any push is (its row in the device's results before it runs, held
/// for an offline device, run on the delivery queue), so results, events, callbacks and metrics see it as one.
///
/// The channel's `message-storage-policy` decides what an offline device gets: with 0 (no storage) each push is
/// "now or never" (`apns-expiration: 0`, recorded `expired` for an offline device), with 1 it keeps the broadcast's
/// `apns-expiration` and waits with the device's other held push (the newest per topic, ``HeldPushes``).
///
/// It runs after the broadcast's 200, off the request, as APNs fans out; the broadcast stays in the
/// ``ChannelStore`` until every push is admitted, so a server that stops first hands it out when it starts again
/// (an activity that had its push then gets it twice; the second, with the same `timestamp`, changes nothing shown).
/// In a fleet the fleet keeps it, and each node hands out its share, a device folder at a time
/// (``handOutShare(_:folder:)``).
final class BroadcastFanOut: Sendable {
    private struct State {
        var running = 0
        var stopping = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// This node's store; nil in a fleet, which keeps what is owed itself.
    let store: ChannelStore?
    let devices: DeviceRegistry
    /// Admits one push for one device, as ``PushService/enqueue(_:to:uniqueID:completion:)`` does; nil once admitted,
    /// else APNs's refusal (429 when the queue is full, 503 when stopping).
    let admit: @Sendable (AcceptedPush, Device) async -> APNsError?
    let logger: Logger
    private let state = Mutex(State())

    init(
        store: ChannelStore?, devices: DeviceRegistry, logger: Logger,
        admit: @escaping @Sendable (AcceptedPush, Device) async -> APNsError?
    ) {
        self.store = store
        self.devices = devices
        self.admit = admit
        self.logger = logger
    }

    /// Whether broadcasts are taken: false once the server is stopping.
    var isAccepting: Bool { state.withLock { !$0.stopping } }

    /// Starts handing `broadcast` out to this node's devices; false when the server is stopping (it stays for the
    /// next start).
    @discardableResult
    func start(_ broadcast: ChannelStore.Broadcast) -> Bool {
        guard begin() else { return false }
        Task {
            if await handOut(broadcast, folder: nil) {
                do { try store?.handedOut(broadcast) } catch {
                    logger.warning(
                        "broadcast handed out, not marked so", metadata: ["store.error": .string("\(error)")])
                }
            }
            end()
        }
        return true
    }

    /// Hands a fleet's `broadcast` to the devices of `folder` (as the fleet's rows name it: a `--devices` folder, or
    /// a device's own) served here; false when the server is stopping or the folder's devices are leaving (still
    /// owed, then).
    func handOutShare(_ broadcast: ChannelStore.Broadcast, folder: String) async -> Bool {
        guard begin() else { return false }
        defer { end() }
        return await handOut(broadcast, folder: folder)
    }

    /// One more hand-out running, unless the server is stopping.
    private func begin() -> Bool {
        state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.running += 1
            return true
        }
    }

    private func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            guard state.running == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Hands out again what a previous run answered 200 for and did not finish. Returns how many it started.
    @discardableResult
    func resume() -> Int {
        guard let store else { return 0 }
        let unfinished: [ChannelStore.Broadcast]
        do { unfinished = try store.unfinished() } catch {
            logger.error("broadcasts not resumed", metadata: ["store.error": .string("\(error)")])
            return 0
        }
        if !unfinished.isEmpty {
            logger.notice(
                "handing out broadcasts accepted before the server stopped",
                metadata: ["push.count": "\(unfinished.count)"])
        }
        return unfinished.filter { start($0) }.count
    }

    /// Takes no new broadcast and waits for those being handed out to be admitted (the delivery queue then runs
    /// them as it runs every accepted push).
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                state.stopping = true
                guard state.running > 0 else { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// One push per running activity subscribed to the channel (on the devices of `folder` only, when given);
    /// false when it stopped before every push was admitted.
    private func handOut(_ broadcast: ChannelStore.Broadcast, folder: String?) async -> Bool {
        let channel = broadcast.channel
        let now = SystemClock.unixMilliseconds()
        var pushes = 0
        for directory in devices.liveActivities.subscribers(of: channel.id) {
            if let folder, !Self.directory(directory, isIn: folder) { continue }
            guard let device = devices.device(in: directory), device.config.bundleID == channel.bundleID else {
                continue
            }
            let activities: [LiveActivity]
            do { activities = try device.liveActivities.read().activities } catch {
                logger.warning(
                    "broadcast not handed to a device: its live activities do not read",
                    metadata: ["device.folder": .string(device.directory), "store.error": .string("\(error)")])
                continue
            }
            for activity in activities where activity.channelID == channel.id && activity.isRunning(at: now) {
                let push = AcceptedPush(
                    apnsID: broadcast.requestID, token: activity.id.lowercased(), tokenKind: .liveActivity,
                    pushType: .liveactivity, priority: broadcast.priority, payload: broadcast.payload,
                    expiration: channel.storagePolicy == .noStorage ? 0 : broadcast.expiration,
                    collapseID: broadcast.collapseID)
                switch await admitWaiting(push, to: device) {
                case .admitted: pushes += 1
                case .stopping: return false
                case .refused(let error):
                    logger.error(
                        "broadcast not handed to an activity",
                        metadata: [
                            "apns.request_id": .string(broadcast.requestID),
                            "device.folder": .string(device.directory), "apns.reason": .string(error.reason),
                        ])
                }
            }
        }
        logger.info(
            "broadcast handed out",
            metadata: [
                "apns.request_id": .string(broadcast.requestID), "broadcast.channel_id": .string(channel.id),
                "push.count": "\(pushes)",
            ])
        return true
    }

    /// Whether the device in `directory` is `folder` (a `--device`) or one of its devices (`--devices`), paths
    /// compared with their links resolved, as the fleet's rows name folders.
    static func directory(_ directory: String, isIn folder: String) -> Bool {
        (FileSystem.resolvedPath(directory) ?? directory) == folder
            || (FileSystem.resolvedPath(Path.dirname(directory)) ?? Path.dirname(directory)) == folder
    }

    private enum Admitted {
        case admitted
        case stopping
        case refused(APNsError)
    }

    /// Admits a push, waiting while the queue is full: the broadcast was answered 200, so none of its pushes is
    /// dropped for want of room.
    private func admitWaiting(_ push: AcceptedPush, to device: Device) async -> Admitted {
        while true {
            guard let refusal = await admit(push, device) else { return .admitted }
            switch refusal.status {
            case 429: try? await Task.sleep(for: .milliseconds(50))
            case 503: return .stopping
            default: return .refused(refusal)
            }
        }
    }
}
