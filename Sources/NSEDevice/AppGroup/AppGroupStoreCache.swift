import NSESystem
import Synchronization

/// The App Group stores a process keeps open for its whole life, one per container: an extension process that iOS
/// keeps between notifications opens its container's store on the first push and uses it for every later one.
///
/// Why: the store's write-ahead log stays between connections, and the first connection to open a database that no
/// other process has open rebuilds the log's index by reading and checksumming every frame since the last checkpoint
/// (up to ~4 MB). Opening the store afresh for each push paid that every time; a connection kept open pays it once.
/// One connection per file per process is also what SQLite's POSIX locks want (closing any descriptor of a file drops
/// all of the process's locks on it).
///
/// A kept store is checked against its file at each use: a database file removed or replaced (a device reset, a
/// container moved aside and made again) is opened anew.
enum AppGroupStoreCache {
    private struct Kept {
        var store: AppGroupStore
        var inode: UInt64
    }

    private static let stores = Mutex<[String: Kept]>([:])

    /// The open store of the container at `directory`, opened (and kept) when the process has none for it yet or
    /// its database file is no longer the one the kept store has open.
    static func store(containerDirectory directory: String) throws(DeviceError) -> AppGroupStore {
        let path = Path.join(directory, AppGroupStore.fileName)
        let current = FileSystem.stamp(path)?.inode
        if let current, let kept = stores.withLock({ $0[directory] }), kept.inode == current {
            return kept.store
        }
        let store = try AppGroupStore(containerDirectory: directory)
        if let inode = FileSystem.stamp(path)?.inode {
            stores.withLock { $0[directory] = Kept(store: store, inode: inode) }
        }
        return store
    }
}
