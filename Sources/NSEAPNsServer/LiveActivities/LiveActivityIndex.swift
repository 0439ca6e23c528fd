import NSEDevice
import NSESystem
import Synchronization

/// Which served device holds a Live Activity token (an activity's push token, a push-to-start token) and which
/// devices have activities listening to a broadcast channel. The app makes these while the server runs
/// (`nse device activity start`, in another process), so the index follows each device's `live-activities.json`:
/// a lookup that misses, and every broadcast, looks at the files' stamps again (one `stat` per served device) and
/// re-reads only those that changed. An app's own remote and VoIP tokens never come here (``DeviceRegistry``).
public final class LiveActivityIndex: Sendable {
    private struct Entry {
        var stamp: FileSystem.Stamp?
        var tokens: [String] = []
        var channels: Set<String> = []
    }

    private struct State {
        /// By device folder.
        var entries: [String: Entry] = [:]
        /// Lowercase token to device folder.
        var byToken: [String: String] = [:]
    }

    private let served: Mutex<[String]>
    private let state = Mutex(State())

    /// - Parameter directories: the served devices' folders.
    public init(directories: [String]) {
        self.served = Mutex(directories)
        refresh()
    }

    /// The served devices' folders.
    private var directories: [String] { served.withLock { $0 } }

    /// Serves these devices too (folders taken over from a fleet's stopped node).
    func add(directories: [String]) {
        guard !directories.isEmpty else { return }
        served.withLock { $0 += directories }
        refresh(directories)
    }

    /// Serves these devices no more (given back to another node of the fleet).
    func remove(directories: Set<String>) {
        guard !directories.isEmpty else { return }
        served.withLock { $0.removeAll { directories.contains($0) } }
        state.withLock { state in
            for directory in directories { state.entries[directory] = nil }
            state.byToken = state.byToken.filter { !directories.contains($0.value) }
        }
    }

    /// The folder of the device holding `token` (lowercase hex), looking at the files again when it is not known,
    /// or when the file of the device that held it has changed since (the token may be gone: a dismissed activity
    /// is forgotten a day later).
    public func directory(for token: String) -> String? {
        let known = state.withLock { state -> (String, FileSystem.Stamp?)? in
            guard let directory = state.byToken[token] else { return nil }
            return (directory, state.entries[directory]?.stamp)
        }
        if let (directory, stamp) = known {
            if FileSystem.stamp(Path.join(directory, LiveActivityStore.fileName)) == stamp { return directory }
            // Its device's file changed (every push to it changes it): that one is read again.
            refresh([directory])
            if let directory = state.withLock({ $0.byToken[token] }) { return directory }
        }
        refresh()
        return state.withLock { $0.byToken[token] }
    }

    /// The folders of the devices with an activity listening to `channel` (running or not when last read: the
    /// delivery judges each at its moment), files looked at again first.
    public func subscribers(of channel: String) -> [String] {
        refresh()
        return state.withLock { state in
            directories.filter { state.entries[$0]?.channels.contains(channel) ?? false }
        }
    }

    /// Re-reads the state files (of `only` these devices, or all) whose stamp changed since they were last read.
    func refresh(_ only: [String]? = nil) {
        let known = state.withLock { $0.entries.mapValues(\.stamp) }
        var changed: [(String, Entry)] = []
        for directory in only ?? directories {
            let path = Path.join(directory, LiveActivityStore.fileName)
            let stamp = FileSystem.stamp(path)
            if let old = known[directory], old == stamp { continue }
            var entry = Entry(stamp: stamp)
            // A file that does not read leaves the device without activity tokens until it reads again.
            if stamp != nil, let read = try? LiveActivityStore.read(path: path) {
                entry.tokens = read.tokens
                entry.channels = Set(read.activities.compactMap(\.channelID))
            }
            changed.append((directory, entry))
        }
        guard !changed.isEmpty else { return }
        state.withLock { state in
            for (directory, entry) in changed {
                for token in state.entries[directory]?.tokens ?? [] where state.byToken[token] == directory {
                    state.byToken[token] = nil
                }
                for token in entry.tokens where state.byToken[token] == nil { state.byToken[token] = directory }
                state.entries[directory] = entry
            }
        }
    }
}
