import NSEDevice
import Synchronization

/// The pushes APNs keeps for devices that are offline: per device and topic (the app's, or its `.voip` one) only
/// the newest, as Apple's storage works ("APNs stores only the most recent notification for a specific app"). Which
/// devices are offline is decided here, under the same lock as the holding, so a push is never held for a device
/// that just came back. The pushes themselves are in the result store (accepted rows without a result): this is
/// the index a running server delivers from when the device returns.
final class HeldPushes: Sendable {
    /// What becomes of a push: delivered now (the device is online), held (replacing an older one for the same
    /// topic), or dropped undelivered (offline and `apns-expiration: 0`, "now or never").
    enum Holding: Sendable {
        case deliver
        case held(replaced: RecordedPush?)
        case dropped
    }

    private struct State {
        var offline: Set<String> = []
        var held: [String: [TokenKind: RecordedPush]] = [:]
    }

    private let state: Mutex<State>

    /// - Parameter offline: the directories of the devices offline at start.
    init(offline: some Sequence<String>) {
        state = Mutex(State(offline: Set(offline)))
    }

    func isOffline(_ directory: String) -> Bool {
        state.withLock { $0.offline.contains(directory) }
    }

    /// Holds `push` if its device is offline; `storable` false (`apns-expiration: 0`) drops it instead.
    func hold(_ push: RecordedPush, storable: Bool) -> Holding {
        state.withLock { state in
            let directory = push.device.directory
            guard state.offline.contains(directory) else { return .deliver }
            guard storable else { return .dropped }
            let replaced = state.held[directory]?[push.record.push.tokenKind]
            state.held[directory, default: [:]][push.record.push.tokenKind] = push
            return .held(replaced: replaced)
        }
    }

    /// Marks a device online or offline; coming online hands back what was held for it, oldest first.
    func setOnline(_ online: Bool, directory: String) -> [RecordedPush] {
        state.withLock { state in
            guard online else {
                state.offline.insert(directory)
                return []
            }
            state.offline.remove(directory)
            let held = state.held.removeValue(forKey: directory).map { Array($0.values) } ?? []
            return held.sorted { $0.row.id < $1.row.id }
        }
    }

    /// How many pushes are held for a device.
    func count(_ directory: String) -> Int {
        state.withLock { $0.held[directory]?.count ?? 0 }
    }
}
