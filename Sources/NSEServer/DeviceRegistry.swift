public import NSEDevice
import NSESystem
import Synchronization

/// The devices `nse serve` answers for. Each is re-read when its `device.json` changes, so `nse device set`
/// (an uninstall, a callback URL, the filtering entitlement…) takes effect on the next push without a restart.
public final class DeviceRegistry: Sendable {
    private struct Entry {
        var device: Device
        var stamp: (nanoseconds: Int64, inode: UInt64, size: Int64)?
    }

    private let entries: Mutex<[Entry]>

    public init(_ devices: [Device]) {
        entries = Mutex(devices.map { Entry(device: $0, stamp: FileSystem.modificationStamp($0.configPath)) })
    }

    /// Every device, as last read.
    public var all: [Device] { entries.withLock { $0.map(\.device) } }

    /// The device owning `token` (remote or voip token, hex, case-insensitive), re-read if its file changed.
    /// A file that no longer reads keeps the last good configuration.
    public func device(for token: String) -> Device? {
        let found = entries.withLock { entries -> (Int, Entry)? in
            guard let index = entries.firstIndex(where: { $0.device.ownsToken(token) }) else { return nil }
            return (index, entries[index])
        }
        guard let (index, entry) = found else { return nil }
        let stamp = FileSystem.modificationStamp(entry.device.configPath)
        if let stamp, let old = entry.stamp, stamp == old { return entry.device }
        guard let fresh = try? Device.open(at: entry.device.directory), fresh.ownsToken(token) else {
            return entry.device
        }
        entries.withLock { $0[index] = Entry(device: fresh, stamp: stamp) }
        return fresh
    }
}
