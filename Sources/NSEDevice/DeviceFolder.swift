import Dispatch
import NSEJSON
import NSESystem
import Synchronization

/// A folder of device containers, one per subfolder: what `nse device init-many` makes and `nse serve --devices`
/// serves. The index a server keeps of it holds each device's tokens and folder, not the device itself.
public enum DeviceFolder {
    /// One device of the folder, as its `device.json` says.
    public struct Entry: Sendable {
        public var directory: String
        public var remoteToken: String
        public var voipToken: String
        public var online: Bool

        public init(directory: String, remoteToken: String, voipToken: String, online: Bool) {
            self.directory = directory
            self.remoteToken = remoteToken
            self.voipToken = voipToken
            self.online = online
        }
    }

    /// The subfolder names `create` gives: `device-00001`, … (wider when the count needs it).
    public static func name(_ index: Int, of count: Int) -> String {
        let digits = max(5, String(count).count)
        let number = String(index)
        return "device-" + String(repeating: "0", count: max(0, digits - number.count)) + number
    }

    /// Every subfolder holding a `device.json`, in name order; a subfolder whose `device.json` does not read is
    /// named in `problems` (one line each) and left out.
    public static func scan(_ folder: String) throws(DeviceError) -> (entries: [Entry], problems: [String]) {
        let names: [String]
        do { names = try FileSystem.contents(ofDirectory: folder).sorted() } catch {
            throw DeviceError(.notFound, "\(folder): \(error.description)")
        }
        var entries: [Entry] = []
        var problems: [String] = []
        for name in names {
            let directory = Path.join(FileSystem.absolute(folder), name)
            guard FileSystem.exists(Path.join(directory, "device.json")) else { continue }
            do {
                let device = try Device.open(at: directory)
                entries.append(
                    Entry(
                        directory: device.directory, remoteToken: device.config.remoteToken.lowercased(),
                        voipToken: device.config.voipToken.lowercased(), online: device.config.online))
            } catch {
                problems.append(error.description)
            }
        }
        return (entries, problems)
    }

    /// Creates `count` devices under `folder` (made if missing), named by ``name(_:of:)``, with `options`, on
    /// `workers` threads (creating one is mostly waiting for the disk). Stops at the first failure and throws it.
    public static func create(
        in folder: String, count: Int, options: Device.Options, workers: Int = 4
    ) throws(DeviceError) -> [String] {
        do { try FileSystem.createDirectory(folder) } catch { throw DeviceError(.io, error.description) }
        let directories = (1...max(1, count)).map { Path.join(FileSystem.absolute(folder), name($0, of: count)) }
        let next = Atomic<Int>(0)
        let failure = Mutex<DeviceError?>(nil)
        DispatchQueue.concurrentPerform(iterations: max(1, min(workers, count))) { _ in
            while failure.withLock({ $0 == nil }) {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < directories.count else { return }
                do throws(DeviceError) { _ = try Device.create(at: directories[index], options: options) } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return directories
    }
}
