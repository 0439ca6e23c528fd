import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One `nse serve` per device: the server that runs a device's pushes owns its results. A second server on the same
/// device would take the first's push in progress for one a crash left unrun and run it again (issue #39).
///
/// An advisory lock (`flock`) held for the server's life, released by the kernel when it exits however it exits:
/// `DIR/notifications/serve.lock` for each `--device DIR`, and `FOLDER/.nse-serve.lock` for each `--devices FOLDER`
/// (one descriptor for 10,000 devices). The two kinds see each other: a folder's server tries each of its devices'
/// locks at start, a device's server tries its parent folder's. The holder's pid is written in the file, for the
/// message the second server prints.
public final class ServeLock: Sendable {
    /// Why the locks could not all be taken: a one-line message naming the device and the server that has it.
    public struct Busy: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Open while held; emptied by ``release()``.
    private let descriptors: Mutex<[Int32]>

    /// Takes the locks of `devices` (device folders) and `folders` (`--devices` folders, with the devices found in
    /// them), or throws when another server holds one of them.
    public static func acquire(devices: [String], folders: [(folder: String, devices: [String])]) throws(Busy)
        -> ServeLock
    {
        var held: [Int32] = []
        do {
            var folderPaths = Set<String>()
            for (folder, members) in folders {
                let path = Path.join(folder, ".nse-serve.lock")
                guard folderPaths.insert(FileSystem.resolvedPath(folder) ?? folder).inserted else { continue }
                held.append(try lock(path, what: "--devices \(folder)"))
                for member in members {
                    try check(deviceLockPath(member), what: "device \(member)")
                }
            }
            var devicePaths = Set<String>()
            for device in devices {
                guard devicePaths.insert(FileSystem.resolvedPath(device) ?? device).inserted else { continue }
                let parent = Path.dirname(FileSystem.resolvedPath(device) ?? device)
                if !folderPaths.contains(parent) {
                    try check(Path.join(parent, ".nse-serve.lock"), what: "device \(device), in --devices \(parent),")
                }
                held.append(try lock(deviceLockPath(device), what: "device \(device)"))
            }
        } catch {
            for descriptor in held { close(descriptor) }
            throw error
        }
        return ServeLock(descriptors: held)
    }

    private init(descriptors: [Int32]) {
        self.descriptors = Mutex(descriptors)
    }

    deinit {
        release()
    }

    /// Lets the locks go before the server exits: a fleet's node does so once it is done with its devices and before
    /// it says it stopped, so the node taking its devices over never meets them still held (docs/serve.md).
    public func release() {
        let held = descriptors.withLock { descriptors in
            defer { descriptors = [] }
            return descriptors
        }
        for descriptor in held { close(descriptor) }
    }

    static func deviceLockPath(_ device: String) -> String {
        Path.join(device, "notifications", "serve.lock")
    }

    /// Opens and locks `path` for this process, writing its pid in it; the descriptor stays open.
    private static func lock(_ path: String, what: String) throws(Busy) -> Int32 {
        try? FileSystem.createDirectory(Path.dirname(path))
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        // A folder that cannot be written cannot hold results either: the server says so when it opens them.
        guard descriptor >= 0 else { return -1 }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.holder(descriptor)
            close(descriptor)
            throw Busy(description: busy(what, holder: holder))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return descriptor
    }

    /// Throws if another process holds the lock at `path` (a file that does not exist is held by nobody).
    private static func check(_ path: String, what: String) throws(Busy) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else {
            throw Busy(description: busy(what, holder: holder(descriptor)))
        }
        flock(descriptor, LOCK_UN)
    }

    private static func holder(_ descriptor: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes.prefix(count).prefix { $0 != 0x0A }, as: UTF8.self))
    }

    private static func busy(_ what: String, holder: Int32?) -> String {
        let who = holder.map { "another nse serve (pid \($0))" } ?? "another nse serve"
        return "\(what) is served by \(who): one server runs a device's pushes at a time; stop it first"
    }
}
