import NSESystem
import Synchronization

/// The devices a process that lives on has opened, by container: a warm extension process opens its device for
/// every push it serves, and reading and parsing `device.json` each time was a few percent of its CPU per push.
///
/// A kept device is used only while its `device.json` has the stamp it had when it was read (``FileSystem/Stamp``:
/// `nse device set` writes a new file and renames it over the old one, which changes the inode). The stamp is taken
/// before reading, so a change made while it is being read makes the next use read it again.
enum DeviceCache {
    private struct Kept {
        var stamp: FileSystem.Stamp
        var device: Device
    }

    private static let kept = Mutex<[String: Kept]>([:])
    /// A warm extension process serves one device; past this many, the kept devices are dropped and read again.
    static let capacity = 64

    static func device(at path: String) throws(DeviceError) -> Device {
        let directory = FileSystem.absolute(path)
        guard let stamp = FileSystem.stamp(Path.join(directory, "device.json")) else {
            return try Device.open(at: path)  // its error names what is missing
        }
        if let kept = kept.withLock({ $0[directory] }), kept.stamp == stamp { return kept.device }
        let device = try Device.open(at: path)
        kept.withLock { kept in
            if kept.count >= capacity, kept[directory] == nil { kept.removeAll(keepingCapacity: true) }
            kept[directory] = Kept(stamp: stamp, device: device)
        }
        return device
    }

    static func forgetAll() {
        kept.withLock { $0.removeAll() }
    }
}
