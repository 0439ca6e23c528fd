import NSEDevice
import NSESystem
import Synchronization

/// Which served device holds a Live Activity token (an activity's push token, a push-to-start token) and which
/// devices have activities listening to a broadcast channel. The app makes these while the server runs
/// (`nse device activity start`, in another process), so the index follows each device's `live-activities.json`:
/// a lookup that misses, and every broadcast, re-reads the files the kernel says changed (``DirectoryWatch``), and
/// `stat`s only the folders it cannot watch (all of them after the kernel's queue overflowed). A miss used to
/// `stat` every served device's file, and a fleet's node misses on two pushes of three (another node's device).
/// An app's own remote and VoIP tokens never come here (``DeviceRegistry``).
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

    /// The kernel's word on the files, and the served folders it cannot give it for. Held while what it said is
    /// read, so a miss never looks before the changes another miss took from the queue are in ``State``.
    private struct Follower {
        let watch: DirectoryWatch
        var unwatched: Set<String> = []
    }

    /// The served folders, in order (for ``subscribers(of:)``) and as a set (for ``refresh(_:)``'s check).
    private struct Served {
        var list: [String]
        var set: Set<String>
    }

    private let served: Mutex<Served>
    private let state = Mutex(State())
    private let follower: Mutex<Follower>

    /// - Parameter directories: the served devices' folders.
    public init(directories: [String]) {
        self.served = Mutex(Served(list: directories, set: Set(directories)))
        self.follower = Mutex(Follower(watch: DirectoryWatch(fileName: LiveActivityStore.fileName)))
        follow(directories)
    }

    /// The served devices' folders.
    private var directories: [String] { served.withLock { $0.list } }

    /// Serves these devices too (folders taken over from a fleet's stopped node).
    func add(directories: [String]) {
        guard !directories.isEmpty else { return }
        served.withLock { served in
            served.list += directories.filter { !served.set.contains($0) }
            served.set.formUnion(directories)
        }
        follow(directories)
    }

    /// Serves these devices no more (given back to another node of the fleet).
    func remove(directories: Set<String>) {
        guard !directories.isEmpty else { return }
        follower.withLock { follower in
            served.withLock { served in
                served.list.removeAll { directories.contains($0) }
                served.set.subtract(directories)
            }
            for directory in directories {
                follower.watch.unwatch(directory)
                follower.unwatched.remove(directory)
            }
            state.withLock { state in
                for directory in directories { state.entries[directory] = nil }
                state.byToken = state.byToken.filter { !directories.contains($0.value) }
            }
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
            follower.withLock { _ in refresh([directory]) }
            if let directory = state.withLock({ $0.byToken[token] }) { return directory }
        }
        refreshChanged()
        return state.withLock { $0.byToken[token] }
    }

    /// The folders of the devices with an activity listening to `channel` (running or not when last read: the
    /// delivery judges each at its moment), files looked at again first.
    public func subscribers(of channel: String) -> [String] {
        refreshChanged()
        return state.withLock { state in
            directories.filter { state.entries[$0]?.channels.contains(channel) ?? false }
        }
    }

    /// Watches `added` (before reading them: a change made meanwhile is then both read and queued), then reads them.
    private func follow(_ added: [String]) {
        follower.withLock { follower in
            for directory in added where !follower.watch.watch(directory) { follower.unwatched.insert(directory) }
            refresh(added)
        }
    }

    /// Re-reads what changed since the last look: the files the kernel named, and those it cannot name.
    private func refreshChanged() {
        follower.withLock { follower in
            let changes = follower.watch.changes()
            var look = changes.directories
            // A folder whose watch ended (removed, moved) is watched again once it is there again.
            for directory in changes.directories where !follower.watch.isWatching(directory) {
                follower.unwatched.insert(directory)
            }
            if changes.overflowed {
                // The dropped events may have told of folders removed or replaced: which watches still hold.
                follower.unwatched.formUnion(follower.watch.revalidate())
                for directory in follower.unwatched where follower.watch.watch(directory) {
                    follower.unwatched.remove(directory)
                }
                return refresh(directories)
            }
            for directory in follower.unwatched {
                look.insert(directory)
                if follower.watch.watch(directory) { follower.unwatched.remove(directory) }
            }
            refresh(Array(look))
        }
    }

    /// Re-reads the state files of these devices whose stamp changed since they were last read; only with
    /// ``follower`` held (two reads of one file never land out of order).
    private func refresh(_ only: [String]) {
        // A folder given back meanwhile (a lookup read its token's folder before ``remove(directories:)``) stays out.
        let only = served.withLock { served in only.filter { served.set.contains($0) } }
        guard !only.isEmpty else { return }
        let known = state.withLock { state in only.map { state.entries[$0].map(\.stamp) } }
        var changed: [(String, Entry)] = []
        for (directory, old) in zip(only, known) {
            let path = Path.join(directory, LiveActivityStore.fileName)
            let stamp = FileSystem.stamp(path)
            if let old, old == stamp { continue }  // read before, unchanged (or still not there)
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
