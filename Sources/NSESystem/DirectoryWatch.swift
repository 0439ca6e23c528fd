#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Which of many directories had one file of a given name replaced, written, made or removed, as the kernel tells
/// (inotify): a server following a file that other processes write in each of thousands of folders asks this
/// instead of `stat`ing every folder's copy each time (10,000 `stat`s were ~45% of a fleet node's CPU). An event is
/// queued when the change is made, so ``changes()`` reports every change made before it was called.
///
/// Not thread-safe: its owner serializes the calls (and reads what changed before another drains the queue).
/// A directory it cannot watch (no inotify, the watch budget spent, not there) is for the owner to look at itself;
/// so is every directory after ``Changes/overflowed``.
public final class DirectoryWatch {
    /// What changed since the last call.
    public struct Changes: Sendable, Equatable {
        /// Directories whose file changed, or whose watch ended (removed, renamed: not watched any more).
        public var directories: Set<String> = []
        /// The kernel's queue overflowed and changes were dropped: any directory may have changed.
        public var overflowed = false

        public init(directories: Set<String> = [], overflowed: Bool = false) {
            self.directories = directories
            self.overflowed = overflowed
        }
    }

    /// The inotify descriptor; -1 when there is none (every ``watch(_:)`` fails).
    private let descriptor: Int32
    private let fileName: [UInt8]
    /// How many directories it watches at most: half the user's inotify budget, the rest left to the user's other
    /// programs (editors, file managers) that share it.
    private let capacity: Int
    private var directoryByWatch: [Int32: String] = [:]
    private var watchByDirectory: [String: Int32] = [:]

    /// - Parameter fileName: the file followed in each watched directory.
    public init(fileName: String) {
        self.fileName = Array(fileName.utf8)
        self.descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        let text = (try? FileSystem.readText("/proc/sys/fs/inotify/max_user_watches", limit: 64)) ?? nil
        let budget = text.flatMap { Int($0.filter { $0.isNumber }) } ?? 8192
        self.capacity = max(0, budget / 2)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether `directory` is watched now.
    public func isWatching(_ directory: String) -> Bool { watchByDirectory[directory] != nil }

    /// Watches `directory` (already watched: true); false when it cannot, and the owner looks at it itself.
    @discardableResult
    public func watch(_ directory: String) -> Bool {
        if watchByDirectory[directory] != nil { return true }
        guard descriptor >= 0, watchByDirectory.count < capacity else { return false }
        let mask =
            UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE)
            | UInt32(IN_DELETE) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)
        let watch = inotify_add_watch(descriptor, directory, mask)
        guard watch >= 0 else { return false }
        // Two paths to one folder share a watch: the later path is the one reported.
        if let other = directoryByWatch[watch] { watchByDirectory[other] = nil }
        directoryByWatch[watch] = directory
        watchByDirectory[directory] = watch
        return true
    }

    /// Stops watching `directory`.
    public func unwatch(_ directory: String) {
        guard let watch = watchByDirectory.removeValue(forKey: directory) else { return }
        directoryByWatch[watch] = nil
        inotify_rm_watch(descriptor, watch)
    }

    /// Every change queued since the last call (none waiting: an empty answer at once).
    public func changes() -> Changes {
        var changes = Changes()
        guard descriptor >= 0 else { return changes }
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, size)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return changes }
            parse(UnsafeRawBufferPointer(start: buffer, count: count), into: &changes)
        }
    }

    /// The events of one read: `struct inotify_event` (wd, mask, cookie, len) each followed by `len` bytes of
    /// NUL-padded name.
    private func parse(_ bytes: UnsafeRawBufferPointer, into changes: inout Changes) {
        let header = MemoryLayout<Int32>.size + 3 * MemoryLayout<UInt32>.size
        var offset = 0
        while offset + header <= bytes.count {
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let name = UnsafeRawBufferPointer(
                rebasing: bytes[(offset + header)..<min(offset + header + length, bytes.count)])
            offset += header + length
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                changes.overflowed = true
                continue
            }
            guard let directory = directoryByWatch[watch] else { continue }
            if mask & (UInt32(IN_IGNORED) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 {
                // The folder went (or moved: the watch would follow it elsewhere): no longer watched.
                unwatch(directory)
                changes.directories.insert(directory)
            } else if Self.name(name, is: fileName) {
                changes.directories.insert(directory)
            }
        }
    }

    private static func name(_ field: UnsafeRawBufferPointer, is wanted: [UInt8]) -> Bool {
        guard field.count >= wanted.count, field.prefix(wanted.count).elementsEqual(wanted) else { return false }
        return field.count == wanted.count || field[wanted.count] == 0
    }
}
