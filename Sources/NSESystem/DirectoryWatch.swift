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
/// A directory it cannot watch (no inotify, the watch budget spent, not there, on a network file system whose other
/// machines' writes the local kernel never sees, already watched under another path) is for the owner to look at
/// itself; so is every directory after ``Changes/overflowed``, when ``revalidate()`` says which watches survived.
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
    /// The kernel refused a watch for want of budget (ENOSPC: the user's watches, shared with the user's other
    /// processes, are spent): no other is asked for until one of ours is given back.
    private var budgetSpent = false
    private static let mask =
        UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
        | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)
    /// File systems whose files other machines write (statfs's f_type): the local kernel reports none of those
    /// writes, so a watch there would say "unchanged" for ever. NFS, SMB (three), Ceph, FUSE, 9P, AFS, GFS2, OCFS2,
    /// Lustre.
    private static let networkFileSystems: Set<Int> = [
        0x6969, 0x517B, 0xFF53_4D42, 0xFE53_4D42, 0x00C3_6400, 0x6573_5546, 0x0102_1997, 0x5346_414F, 0x0116_1970,
        0x7461_636F, 0x0BD0_0BD0,
    ]

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
        guard descriptor >= 0, watchByDirectory.count < capacity, !budgetSpent, !Self.isNetworked(directory) else {
            return false
        }
        let watch = inotify_add_watch(descriptor, directory, Self.mask)
        guard watch >= 0 else {
            if errno == ENOSPC { budgetSpent = true }
            return false
        }
        // Another path to a folder watched already (the kernel gives its watch again): that path keeps it, and this
        // one is the owner's to look at.
        guard directoryByWatch[watch] == nil else { return false }
        directoryByWatch[watch] = directory
        watchByDirectory[directory] = watch
        return true
    }

    /// Stops watching `directory`.
    public func unwatch(_ directory: String) {
        guard let watch = watchByDirectory.removeValue(forKey: directory) else { return }
        directoryByWatch[watch] = nil
        inotify_rm_watch(descriptor, watch)
        budgetSpent = false
    }

    /// After an overflow, whose dropped events may have told of folders removed or replaced: asks the kernel for
    /// each watched folder's watch again (the same folder gives the same watch back) and answers the folders no
    /// longer watched, gone or replaced by another of the same path (that one watched from now on, if it can be).
    public func revalidate() -> Set<String> {
        var lost: Set<String> = []
        for (directory, old) in watchByDirectory {
            let current = inotify_add_watch(descriptor, directory, Self.mask)
            guard current != old else { continue }
            directoryByWatch[old] = nil
            watchByDirectory[directory] = nil
            if current >= 0, directoryByWatch[current] == nil {
                // Replaced by another folder of the same path: that one is watched from now on.
                directoryByWatch[current] = directory
                watchByDirectory[directory] = current
            } else {
                if current < 0, errno == ENOSPC { budgetSpent = true }
                lost.insert(directory)
            }
        }
        return lost
    }

    /// statfs(2) by its symbol: Swift's Glibc module leaves out <sys/vfs.h>. `f_type` is the structure's first
    /// field, a `long`, on every 64-bit Linux; the buffer is larger than the structure anywhere.
    private typealias StatFS = @convention(c) (UnsafePointer<CChar>, UnsafeMutableRawPointer) -> Int32
    private static let statFS: StatFS? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "statfs")
        .map { unsafeBitCast($0, to: StatFS.self) }

    private static func isNetworked(_ directory: String) -> Bool {
        guard let statFS else { return false }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 512, alignment: 8)
        defer { buffer.deallocate() }
        guard statFS(directory, buffer) == 0 else { return false }
        let type = buffer.load(as: Int.self) & 0xFFFF_FFFF
        return networkFileSystems.contains(type)
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
