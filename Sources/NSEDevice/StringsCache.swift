import NSEPayload
import NSESystem
import Synchronization

/// The strings tables a process that lives on has read, by the folders they came from: a warm extension process and
/// `nse serve` look up a device's strings for every push, and reading and parsing its `.strings` files each time was
/// a few percent of their CPU per push.
///
/// A kept table is used only while every folder it came from and every file it read has the stamp it had when it
/// was read (``FileSystem/Stamp``): a folder's stamp changes when a file is added, removed or renamed in it, a file's
/// when it is rewritten, replaced or its permissions change. Stamps are taken before reading, so a change made while
/// a table is being read makes the next use read it again.
enum StringsCache {
    private struct Kept {
        var folders: [FileSystem.Stamp?]
        var files: [(path: String, stamp: FileSystem.Stamp?)]
        var strings: (table: StringsTable, problems: [String])
    }

    /// Kept tables by their folders (joined). `nse serve` may serve thousands of devices, each with its own
    /// folders: past ``capacity`` the kept tables are dropped, and read again as pushes need them.
    private static let kept = Mutex<[String: Kept]>([:])
    static let capacity = 1024

    /// The strings of `folders` (in order): the kept table when nothing changed, else their files read now
    /// (``Device/strings(from:)``).
    static func strings(folders: [String]) -> (table: StringsTable, problems: [String]) {
        let key = folders.joined(separator: "\n")
        let folderStamps = folders.map(FileSystem.stamp)
        if let kept = kept.withLock({ $0[key] }), kept.folders == folderStamps,
            kept.files.allSatisfy({ FileSystem.stamp($0.path) == $0.stamp })
        {
            return kept.strings
        }
        let files = Device.stringsFiles(in: folders)
        let fileStamps = files.map { (path: $0, stamp: FileSystem.stamp($0)) }
        let strings = Device.strings(from: files)
        kept.withLock { kept in
            if kept.count >= capacity, kept[key] == nil { kept.removeAll(keepingCapacity: true) }
            kept[key] = Kept(folders: folderStamps, files: fileStamps, strings: strings)
        }
        return strings
    }
}
