public import NSEDevice
import NSESystem
import Synchronization

/// The devices `nse serve` answers for, found by token in one dictionary lookup. Each is re-read when its
/// `device.json` changes, so `nse device set` (an uninstall, a callback URL, the filtering entitlement…) takes effect
/// on the next push without a restart. Devices of a folder (`--devices DIR`) are indexed by their tokens at start
/// and opened on their first push or lookup, so an idle device costs the server its index entry.
public final class DeviceRegistry: Sendable {
    private struct Entry {
        let directory: String
        /// Nil until the device is first needed.
        var device: Device?
        var stamp: FileSystem.Stamp?
        /// Given back to another node of the fleet (``remove(directories:)``): no longer served.
        var removed = false
    }

    private struct State {
        var entries: [Entry] = []
        /// Lowercase remote and VoIP tokens to their entry.
        var byToken: [String: Int] = [:]
        /// Device folders to their entry.
        var byDirectory: [String: Int] = [:]
        /// The entries' folders as absolute paths without links, worked out when first asked (``serves(directory:)``).
        var resolved: [String] = []
        var resolvedSet: Set<String> = []
        /// Entries removed (``remove(directories:)``).
        var removedCount = 0

        /// `resolvedSet` from `resolved`, without the entries removed.
        mutating func resolveServed() {
            resolvedSet = Set(resolved.indices.filter { !entries[$0].removed }.map { resolved[$0] })
        }
    }

    private let state: Mutex<State>
    /// The Live Activity tokens (activities' and push-to-start) the apps make while served, and the broadcast
    /// channels their activities listen to.
    public let liveActivities: LiveActivityIndex

    /// Devices opened already (`--device DIR`).
    public convenience init(_ devices: [Device]) {
        self.init(devices: devices, folder: [])
    }

    /// Opened devices and the entries of device folders (opened when first needed).
    public init(devices: [Device], folder: [DeviceFolder.Entry]) {
        var state = State()
        func index(_ entry: Entry, tokens: [String]) {
            for token in tokens where state.byToken[token] == nil { state.byToken[token] = state.entries.count }
            if state.byDirectory[entry.directory] == nil { state.byDirectory[entry.directory] = state.entries.count }
            state.entries.append(entry)
        }
        for device in devices {
            index(
                Entry(
                    directory: device.directory, device: device,
                    stamp: FileSystem.stamp(device.configPath)),
                tokens: [device.config.remoteToken.lowercased(), device.config.voipToken.lowercased()])
        }
        for item in folder {
            index(
                Entry(directory: item.directory, device: nil, stamp: nil), tokens: [item.remoteToken, item.voipToken])
        }
        self.liveActivities = LiveActivityIndex(directories: state.entries.map(\.directory))
        self.state = Mutex(state)
    }

    /// Adds the devices of folders this server takes over (a fleet's node that stopped, docs/serve.md), indexed by
    /// token as at start and opened on first use; a folder already served is not added twice.
    /// - Returns: the entries added.
    @discardableResult
    public func add(_ folder: [DeviceFolder.Entry]) -> [DeviceFolder.Entry] {
        let added = state.withLock { state -> [DeviceFolder.Entry] in
            var added: [DeviceFolder.Entry] = []
            for item in folder where state.byDirectory[item.directory] == nil {
                let index = state.entries.count
                for token in [item.remoteToken, item.voipToken] where !token.isEmpty && state.byToken[token] == nil {
                    state.byToken[token] = index
                }
                state.byDirectory[item.directory] = index
                state.entries.append(Entry(directory: item.directory, device: nil, stamp: nil))
                added.append(item)
            }
            return added
        }
        liveActivities.add(directories: added.map(\.directory))
        return added
    }

    /// The remote and VoIP tokens of the served devices in `directories`.
    public func tokens(of directories: some Sequence<String>) -> [String] {
        let wanted = Set(directories)
        return state.withLock { state in
            let indexes = Set(wanted.compactMap { state.byDirectory[$0] })
            return state.byToken.filter { indexes.contains($0.value) }.map(\.key).sorted()
        }
    }

    /// Stops serving the devices in `directories` (given back to the node of the fleet that serves them again,
    /// docs/serve.md "Coming back"): their tokens find nothing here from now on.
    public func remove(directories: some Sequence<String>) {
        let gone = Set(directories)
        state.withLock { state in
            var indexes = Set<Int>()
            for directory in gone {
                guard let index = state.byDirectory.removeValue(forKey: directory) else { continue }
                indexes.insert(index)
                state.entries[index].removed = true
                state.entries[index].device = nil
            }
            state.byToken = state.byToken.filter { !indexes.contains($0.value) }
            state.removedCount += indexes.count
            state.resolveServed()
        }
        liveActivities.remove(directories: gone)
    }

    /// Whether the device in `directory` is served here already, under this path or another to the same folder
    /// (a relative `--devices`, a link).
    public func serves(directory: String) -> Bool {
        let resolved = FileSystem.resolvedPath(directory) ?? directory
        return state.withLock { state in
            if state.byDirectory[directory] != nil { return true }
            if state.resolved.count < state.entries.count {
                for entry in state.entries[state.resolved.count...] {
                    state.resolved.append(FileSystem.resolvedPath(entry.directory) ?? entry.directory)
                }
                state.resolveServed()
            }
            return state.resolvedSet.contains(resolved)
        }
    }

    /// How many devices are served.
    public var count: Int { state.withLock { $0.entries.count - $0.removedCount } }

    /// Every device, as last read (a folder's devices not opened yet are opened for this, and kept).
    public var all: [Device] { first(.max) }

    /// The first `limit` devices, in the order they were given (only those are opened).
    public func first(_ limit: Int) -> [Device] {
        let served = state.withLock { state -> [Int] in
            guard state.removedCount > 0 else { return Array(0..<min(limit, state.entries.count)) }
            let entries = state.entries
            return Array(entries.indices.filter { !entries[$0].removed }.prefix(limit))
        }
        return served.compactMap { device(at: $0, token: nil) }
    }

    /// The device owning `token` (remote or voip token, hex, case-insensitive), re-read if its file changed.
    /// A file that no longer reads keeps the last good configuration.
    public func device(for token: String) -> Device? {
        let lowered = token.lowercased()
        guard let index = state.withLock({ $0.byToken[lowered] }) else {
            // Not an app's own token: maybe a Live Activity's, made since the server started.
            guard let directory = liveActivities.directory(for: lowered) else { return nil }
            return device(in: directory)
        }
        return device(at: index, token: lowered)
    }

    /// The served device in `directory`, as last read.
    public func device(in directory: String) -> Device? {
        guard let index = state.withLock({ $0.byDirectory[directory] }) else { return nil }
        return device(at: index, token: nil)
    }

    private func device(at index: Int, token: String?) -> Device? {
        let entry = state.withLock { $0.entries[index] }
        guard !entry.removed else { return nil }
        let stamp = FileSystem.stamp(Path.join(entry.directory, "device.json"))
        if let device = entry.device, let stamp, let old = entry.stamp, stamp == old { return device }
        guard let fresh = try? Device.open(at: entry.directory), token.map(fresh.ownsToken) ?? true else {
            return entry.device
        }
        state.withLock { state in
            guard !state.entries[index].removed else { return }
            state.entries[index] = Entry(directory: entry.directory, device: fresh, stamp: stamp)
        }
        return fresh
    }
}
