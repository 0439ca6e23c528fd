import NSEDevice
import Synchronization

/// The pushes APNs keeps for devices that are offline: per device and topic (the app's, or its `.voip` one) one
/// push, as Apple's storage works ("APNs stores only the most recent notification for a specific app"), with the
/// liberties of ``StoreLiberties`` for a device whose store is `apple`. Which devices are offline is decided here,
/// under the same lock as the holding, so a push is never held for a device that just came back. The pushes
/// themselves are in the result store (accepted rows without a result): this is the index a running server
/// delivers from when the device returns.
final class HeldPushes: Sendable {
    /// What becomes of a push: delivered now (the device is online), held (replacing an older one for the same
    /// topic), not kept because the store kept an older one, or dropped undelivered (offline and `apns-expiration:
    /// 0`, "now or never"; or a low-priority push the `apple` store dropped).
    enum Holding: Sendable {
        case deliver
        case held(replaced: RecordedPush?)
        /// The `apple` store kept the older push for the topic: this one goes undelivered.
        case keptOlder
        case dropped
        case droppedLowPriority
    }

    private struct State {
        var offline: Set<String> = []
        var held: [String: [TokenKind: RecordedPush]] = [:]
        /// Pushes stored so far per device: the index of the `apple` store's draws.
        var stored: [String: UInt64] = [:]
    }

    private let state: Mutex<State>

    /// - Parameter offline: the directories of the devices offline at start.
    init(offline: some Sequence<String>) {
        state = Mutex(State(offline: Set(offline)))
    }

    /// Devices taken over from a fleet's stopped node that are offline: their pushes are held from now on.
    func add(offline: some Sequence<String>) {
        state.withLock { $0.offline.formUnion(offline) }
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
            let config = push.device.config
            let sequence = state.stored[directory, default: 0]
            state.stored[directory] = sequence + 1
            let seed = StoreLiberties.seed(of: config)
            let apple = config.apnsStore == .apple
            if apple, push.record.push.priority < 10,
                StoreLiberties.takes(.dropLowPriority, seed: seed, sequence: sequence)
            {
                return .droppedLowPriority
            }
            let kind = push.record.push.tokenKind
            let older = state.held[directory]?[kind]
            if apple, older != nil, StoreLiberties.takes(.keepOlder, seed: seed, sequence: sequence) {
                return .keptOlder
            }
            state.held[directory, default: [:]][kind] = push
            return .held(replaced: older)
        }
    }

    /// Marks a device online or offline; coming online hands back what was held for it, oldest first, unless the
    /// `apple` store reorders them (those delivered ahead of an older one are marked `reordered`).
    /// - Parameter config: the device's settings now (its store policy), if known; else those it had when its last
    ///   push was held.
    func setOnline(_ online: Bool, directory: String, config: DeviceConfig? = nil) -> [RecordedPush] {
        state.withLock { state in
            guard online else {
                state.offline.insert(directory)
                return []
            }
            state.offline.remove(directory)
            var held = (state.held.removeValue(forKey: directory).map { Array($0.values) } ?? []).sorted {
                $0.row.id < $1.row.id
            }
            guard held.count > 1, let config = config ?? held.last?.device.config, config.apnsStore == .apple else {
                return held
            }
            let sequence = state.stored[directory, default: 0]
            state.stored[directory] = sequence + 1
            guard StoreLiberties.takes(.reorder, seed: StoreLiberties.seed(of: config), sequence: sequence) else {
                return held
            }
            // Newest first: every push but the oldest now goes ahead of one stored before it.
            held.reverse()
            for index in held.indices.dropLast() { held[index].liberty = .reordered }
            return held
        }
    }

    /// Forgets the devices in `directories` (given back to another node, which reads their held pushes from their
    /// rows, as unrun ones).
    func forget(_ directories: Set<String>) {
        state.withLock { state in
            state.offline.subtract(directories)
            for directory in directories {
                state.held[directory] = nil
                state.stored[directory] = nil
            }
        }
    }

    /// How many pushes are held for a device.
    func count(_ directory: String) -> Int {
        state.withLock { $0.held[directory]?.count ?? 0 }
    }
}
