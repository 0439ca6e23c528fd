import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A SQLite database file used by one or more processes at once: WAL journal, a busy timeout for other processes'
/// locks, and a schema brought up to date by numbered migrations when it opens. Each write says how durable it must
/// be (``Durability``): by default it is on disk before `write` returns. The write-ahead log stays between
/// connections, so a short-lived process syncs only what it commits durably. Within a process the one connection is
/// used under a lock, so a `Database` can be shared between threads and tasks.
public final class Database: Sendable {
    /// How much a committed write survives.
    public enum Durability: Sendable {
        /// On disk when `write` returns (`synchronous=FULL`: the log is synced at commit): it survives a crash of the
        /// process, of the system, and a power loss. Anything acknowledged to someone else is written so.
        case durable
        /// In the operating system's hands when `write` returns (`synchronous=NORMAL`): it survives the process being
        /// killed or crashing, but a system crash or power loss before the next durable commit or checkpoint may undo
        /// it. For bookkeeping whose loss repeats work and loses nothing (a mark that a message was shown, a purge).
        case crashSafe

        var pragma: String {
            switch self {
            case .durable: "PRAGMA synchronous=FULL"
            case .crashSafe: "PRAGMA synchronous=NORMAL"
            }
        }
    }

    public struct Options: Sendable {
        /// Create the file (with `fileMode`) when it does not exist.
        public var create = true
        /// How long to wait for another process's write lock before failing with `busy`.
        public var busyTimeoutMilliseconds: Int32 = 10_000
        /// Permissions of a new file (SQLite gives its -wal and -shm files the same).
        public var fileMode: UInt32 = 0o600
        /// The most memory the connection's page cache may hold, in KiB; `nil` keeps SQLite's default (2,000 KiB).
        /// A long-running server with a database per device sets less: its writes append and its reads go by key.
        public var cacheKilobytes: Int?
        /// The size the write-ahead log is cut back to after a checkpoint. A busy file shared by many writers keeps
        /// more: a log that grows again after each checkpoint costs every synced commit meanwhile a journal commit of
        /// the file system for its new size (about twice the CPU of one into a log already that long).
        public var logKeptBytes: Int

        public init(
            create: Bool = true, busyTimeoutMilliseconds: Int32 = 10_000, fileMode: UInt32 = 0o600,
            cacheKilobytes: Int? = nil, logKeptBytes: Int = 1 << 20
        ) {
            self.create = create
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.fileMode = fileMode
            self.cacheKilobytes = cacheKilobytes
            self.logKeptBytes = logKeptBytes
        }
    }

    /// The database file.
    public let path: String
    private let connection: Mutex<SQLiteConnection>
    /// The writes waiting for a group commit (``batchedWrite(_:_:)``).
    private let batches = WriteBatches()

    /// Opens `path` and applies the migrations it has not had yet: `schema[0]` makes version 1, `schema[1]` takes
    /// version 1 to 2, and so on, each in its own transaction. A file at a newer version than `schema` knows is
    /// refused (`newerSchema`) rather than misread.
    public init(path: String, schema: [String], options: Options = Options()) throws(DatabaseError) {
        self.path = path
        if options.create {
            // Made here so the file has its mode from the first byte (SQLite would use the umask's). Only when it
            // does not exist (O_EXCL): closing a descriptor of a file this process already has open as a database
            // drops every POSIX lock the process holds on it, and another process closing last would then take
            // the write-ahead log away from under the open connection.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(options.fileMode))
            if fd < 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno))
                let code: DatabaseError.Code = errno == EROFS ? .readOnly : (errno == ENOSPC ? .full : .cannotOpen)
                throw DatabaseError(code: code, message: "\(path): cannot create: \(reason)")
            }
            if fd >= 0 { close(fd) }
        }
        let opened = try SQLiteConnection(path: path, create: options.create, readOnly: false)
        opened.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
        // WAL: readers never block the writer and a crash mid-write leaves the last commit intact.
        _ = try opened.run("PRAGMA journal_mode=WAL", [])
        try opened.keepWriteAheadLog()
        // The write-ahead log is kept between connections; after a checkpoint it is cut back (1 MiB unless told), so
        // a burst of writes does not leave a large file behind for good.
        var pragmas =
            "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA journal_size_limit=\(max(0, options.logKeptBytes));"
        if let kilobytes = options.cacheKilobytes { pragmas += " PRAGMA cache_size=-\(max(64, kilobytes));" }
        try opened.executeScript(pragmas)
        try Self.migrate(opened, to: schema, path: path)
        connection = Mutex(opened)
    }

    private static func migrate(_ connection: SQLiteConnection, to schema: [String], path: String) throws(DatabaseError)
    {
        let current = try connection.run("PRAGMA user_version", []).first?.integer(0) ?? 0
        if current > Int64(schema.count) {
            throw DatabaseError(
                code: .newerSchema,
                message:
                    "\(path): schema version \(current) is newer than this nse knows (\(schema.count)): use a newer nse or move the file aside"
            )
        }
        guard current < Int64(schema.count) else { return }
        try connection.executeScript("BEGIN IMMEDIATE")
        do throws(DatabaseError) {
            // Another process may have migrated while this one waited for the lock: read the version again.
            let version = try connection.run("PRAGMA user_version", []).first?.integer(0) ?? 0
            for step in Int(version)..<schema.count {
                try connection.executeScript(schema[step])
            }
            try connection.executeScript("PRAGMA user_version = \(max(Int(version), schema.count)); COMMIT")
        } catch {
            try? connection.executeScript("ROLLBACK")
            throw error
        }
    }

    /// Runs one statement in its own transaction (durable when it writes); returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws(DatabaseError) -> [SQLRow] {
        try connection.withLock { connection throws(DatabaseError) in
            try Self.set(.durable, on: connection)
            return try connection.run(sql, bindings)
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`: the write lock is taken first, so two processes never
    /// deadlock upgrading a read). It commits when `body` returns and rolls back when it throws; nothing of a
    /// failed transaction is kept. A result counts as stored, as `durability` says, only once this returns.
    /// Its result is `body`'s, discardable as `execute`'s is: `write { tx in try tx.execute(…) }` needs no `_ =`.
    @discardableResult
    public func write<T>(
        _ durability: Durability = .durable, _ body: (borrowing Transaction) throws(DatabaseError) -> T
    ) throws(DatabaseError) -> T {
        try transaction("BEGIN IMMEDIATE", durability, body)
    }

    /// ``write(_:_:)`` with a group commit: the writes of other threads that wait at the same time share its
    /// transaction and its one sync (each behind a savepoint: one that throws is rolled back alone, and throws here).
    /// The batch is synced when any of its writes is `.durable`. For writes from many threads to one file (a busy
    /// device's pushes): one waits while a batch commits, then its batch takes every write that came meanwhile.
    @discardableResult
    public func batchedWrite<T>(
        _ durability: Durability = .durable, _ body: (borrowing Transaction) throws(DatabaseError) -> T
    ) throws(DatabaseError) -> T {
        let outcome = withoutActuallyEscaping(body) { body in
            let job = BatchedWriteJob(durability, body)
            batches.submit(job, execute: commit)
            return job.outcome
        }
        switch outcome {
        case .success(let value)?: return value
        case .failure(let error)?: throw error
        case nil: throw DatabaseError(code: .other, message: "\(path): a batched write was never run")
        }
    }

    /// The batches ``batchedWrite(_:_:)`` has run (each one transaction, one commit), and the writes waiting now for
    /// the next one.
    public var batchedWrites: (batches: Int, waiting: Int) {
        (batches.commits.load(ordering: .relaxed), batches.waiting)
    }

    /// One batch: one transaction, a savepoint per write, one commit.
    private func commit(_ batch: [any BatchedWrite]) {
        let durability: Durability = batch.contains { $0.durability == .durable } ? .durable : .crashSafe
        connection.withLock { connection in
            do throws(DatabaseError) {
                try Self.set(durability, on: connection)
                try connection.control("BEGIN IMMEDIATE")
            } catch {
                for write in batch { write.fail(error) }
                return
            }
            if batch.count == 1, let write = batch.first {
                // Alone: as write(_:_:) does, a failure rolls the transaction back.
                guard write.run(Transaction(connection: connection)) else {
                    if connection.inTransaction { try? connection.executeScript("ROLLBACK") }
                    return
                }
            } else {
                for (index, write) in batch.enumerated() {
                    do throws(DatabaseError) {
                        try connection.control("SAVEPOINT nse_batched")
                        if !write.run(Transaction(connection: connection)) {
                            try connection.control("ROLLBACK TO nse_batched")
                        }
                        try connection.control("RELEASE nse_batched")
                    } catch {
                        // SQLite may have rolled the whole transaction back (a full disk, an I/O error): what ran
                        // before is gone too, and nothing after can go in it.
                        let lost = connection.inTransaction ? [write] : Array(batch[...index])
                        for failed in lost { failed.fail(error) }
                        if !connection.inTransaction {
                            for rest in batch[(index + 1)...] { rest.fail(error) }
                            return
                        }
                    }
                }
            }
            do throws(DatabaseError) {
                try connection.control("COMMIT")
            } catch {
                if connection.inTransaction { try? connection.executeScript("ROLLBACK") }
                for write in batch { write.fail(error) }
            }
        }
    }

    /// Runs `body` in a read transaction: it sees one consistent snapshot whatever other processes commit meanwhile.
    public func read<T>(_ body: (borrowing Transaction) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        try transaction("BEGIN DEFERRED", nil, body)
    }

    /// Switches the connection's sync mode (outside any transaction) when the next write wants another one.
    private static func set(_ durability: Durability, on connection: SQLiteConnection) throws(DatabaseError) {
        guard connection.durability != durability else { return }
        try connection.executeScript(durability.pragma)
        connection.durability = durability
    }

    /// `begin`, then `body`, then COMMIT; ROLLBACK when anything throws.
    private func transaction<T>(
        _ begin: String, _ durability: Durability?, _ body: (borrowing Transaction) throws(DatabaseError) -> T
    ) throws(DatabaseError) -> T {
        try connection.withLock { connection throws(DatabaseError) -> T in
            if let durability { try Self.set(durability, on: connection) }
            try connection.control(begin)
            do throws(DatabaseError) {
                let value = try body(Transaction(connection: connection))
                try connection.control("COMMIT")
                return value
            } catch {
                if connection.inTransaction { try? connection.executeScript("ROLLBACK") }
                throw error
            }
        }
    }

    /// The statements of one transaction.
    public struct Transaction: ~Copyable {
        let connection: SQLiteConnection

        /// Runs one statement; returns its rows.
        @discardableResult
        public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws(DatabaseError) -> [SQLRow] {
            try connection.run(sql, bindings)
        }

        /// Rows the last statement changed.
        public var changes: Int { connection.changes }
    }
}
