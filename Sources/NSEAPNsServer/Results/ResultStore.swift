public import Logging
public import NSEDatabase
public import NSEDevice
public import NSEHost
public import NSEJSON
import NSEPayload
import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where pushes and their results live: one SQLite database for each `--devices` folder, `FOLDER/.nse-results.db`
/// (each row names its device by its subfolder), and one for each device served alone (`--device DIR`),
/// `DIR/notifications/results.db`.
///
/// A push is written when it is accepted, before its 200 (``accept(_:for:)``): a push answered 200 is on disk even
/// if the server dies before it runs. Its result fills the same row when the extension is done
/// (``complete(_:result:for:)``). If the answer could not be written to the client (connection gone, stream
/// reset), the row is marked not acknowledged (``markUnacknowledged(_:for:)``) and reads say `"acknowledged": false`:
/// the provider never saw the 200 and may send the push again.
///
/// One database for a folder's devices, not one each: the pushes a server takes at once go to different devices,
/// and in one file they share a transaction and its sync (a group commit), and its write-ahead log is reused after
/// ~1,000 pages in all rather than grown for each device's first ~100 pushes. Each device's rows keep their own
/// numbering (`seq`, the `id` reads give), as when each device had its own file: a device's `results.db` from an
/// older nse is imported, numbers and all, when its folder's database is opened.
public final class ResultStore: Sendable {
    /// Version 1: one row per accepted push; `result` (the JSON document) is NULL until the push has run.
    /// Version 2: the push itself is kept until then. Version 3: so is the content its extension delivered.
    /// Version 4: the device (its subfolder in a folder's database) and the row's number among the device's.
    static let schema = [
        """
        CREATE TABLE results (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            apns_id TEXT NOT NULL,
            token TEXT NOT NULL,
            outcome TEXT,
            received_at INTEGER NOT NULL,
            recorded_at INTEGER,
            acknowledged INTEGER NOT NULL DEFAULT 1,
            result TEXT
        );
        CREATE INDEX results_done ON results(id) WHERE result IS NOT NULL;
        """,
        // Version 2: the accepted push itself, until it has run, so a server that stops (a crash, SIGKILL, a
        // power loss) after answering 200 runs it when it starts again, as APNs delivers what it accepted.
        """
        ALTER TABLE results ADD COLUMN unique_id TEXT;
        ALTER TABLE results ADD COLUMN token_kind TEXT;
        ALTER TABLE results ADD COLUMN push_type TEXT;
        ALTER TABLE results ADD COLUMN priority INTEGER;
        ALTER TABLE results ADD COLUMN expiration INTEGER;
        ALTER TABLE results ADD COLUMN collapse_id TEXT;
        ALTER TABLE results ADD COLUMN payload BLOB;
        CREATE INDEX results_unfinished ON results(id) WHERE result IS NULL AND payload IS NOT NULL;
        """,
        // Version 3: what the push's extension handed over with its content (`ExtensionHandover`), kept before the
        // extension is told so and lets go of its App Group messages: a server that stops between that and the
        // result judges the push on it when it starts again, without running an extension that would find nothing.
        """
        ALTER TABLE results ADD COLUMN delivered TEXT;
        """,
        // Version 4: many devices in one file. `device` is the subfolder's name ('' in a device's own file), `seq`
        // the row's number among the device's (its `id` until now), what reads and `since` go by.
        """
        ALTER TABLE results ADD COLUMN device TEXT NOT NULL DEFAULT '';
        ALTER TABLE results ADD COLUMN seq INTEGER;
        UPDATE results SET seq = id;
        CREATE UNIQUE INDEX results_seq ON results(device, seq);
        DROP INDEX results_done;
        DROP INDEX results_unfinished;
        CREATE INDEX results_unfinished ON results(device, seq) WHERE result IS NULL AND payload IS NOT NULL;
        """,
    ]

    /// Where one device's rows are: the database, and the device's name in it.
    struct Home: Sendable, Hashable {
        let path: String
        /// The device's subfolder in its folder's database; empty in a device's own.
        let device: String
        /// The folder, for a folder's database.
        let folder: String?
    }

    /// The open databases, by path, with when each was last used. At most ``maxOpen``: a server of 10,000
    /// devices keeps the busy ones open and closes the least recently used (each open one holds three descriptors
    /// and its page cache).
    private struct Open {
        var databases: [String: (database: Database, used: UInt64)] = [:]
        var clock: UInt64 = 0
    }

    private let open = Mutex(Open())
    /// The `--devices` folders served (as their devices' directories name them): their devices' rows are in the
    /// folder's database.
    private let folders = Mutex(Set<String>())
    /// Held while a folder's database is opened.
    private let folderOpening = Mutex(())
    private let logger: Logger
    /// Databases kept open at once.
    public let maxOpen: Int
    /// How many databases a server keeps open unless told (`nse serve --open-databases`): enough for the devices
    /// served alone a busy server pushes to in turn (with fewer, every push to a device seen before would open its
    /// database again: a schema read, its write-ahead log's index rebuilt), each ~180 KB and three descriptors.
    public static let defaultMaxOpen = 512

    /// The most databases that fit `descriptors` open descriptors, leaving a quarter of them (at least 256) to
    /// everything else: connections, extension pipes, logs.
    public static func maxOpen(fitting descriptors: Int) -> Int {
        max(16, (descriptors - max(256, descriptors / 4)) / 3)
    }

    public init(logger: Logger, maxOpen: Int = ResultStore.defaultMaxOpen) {
        self.logger = logger
        self.maxOpen = max(1, maxOpen)
    }

    /// How many databases are open now.
    public var openCount: Int { open.withLock { $0.databases.count } }

    /// Serves `folders` (`--devices` folders, spelled as their devices' directories name them): their devices' rows
    /// go to `FOLDER/.nse-results.db`. Said before any of their devices' rows is read or written.
    public func serve(folders: some Sequence<String>) {
        self.folders.withLock { $0.formUnion(folders) }
    }

    /// Closes the databases of the devices in `directories` (given back to another node of the fleet, which writes
    /// them from now on). One a write still holds is closed when that write lets go of it.
    public func close(directories: some Sequence<String>) {
        let paths = Set(directories.flatMap { [Self.path(ofDevice: $0), Self.folderPath(Path.dirname($0))] })
        open.withLock { open in
            for path in paths { open.databases[path] = nil }
        }
    }

    /// `DIR/notifications/results.db`: the database of a device served alone.
    public static func path(ofDevice directory: String) -> String {
        Path.join(directory, "notifications", "results.db")
    }

    /// `FOLDER/.nse-results.db`: the database of a folder's devices.
    public static func folderPath(_ folder: String) -> String {
        Path.join(folder, ".nse-results.db")
    }

    /// Where `device`'s rows are.
    func home(for device: Device) -> Home {
        home(forDirectory: device.directory)
    }

    private func home(forDirectory directory: String) -> Home {
        let parent = Path.dirname(directory)
        if folders.withLock({ $0.contains(parent) }) {
            return Home(path: Self.folderPath(parent), device: Path.basename(directory), folder: parent)
        }
        return Home(path: Self.path(ofDevice: directory), device: "", folder: nil)
    }

    /// Whether the device in `directory` may have rows already (its database exists, or the one its rows come from:
    /// its own for a folder's device, its folder's for a device served alone): a server reads those for pushes left
    /// unrun at start, and opens no database for the others.
    public func mayHaveRows(directory: String) -> Bool {
        let home = home(forDirectory: directory)
        guard home.folder != nil else {
            return FileSystem.exists(home.path) || FileSystem.exists(Self.folderPath(Path.dirname(directory)))
        }
        return FileSystem.exists(home.path) || FileSystem.exists(Self.path(ofDevice: directory))
            || FileSystem.exists(Self.legacyPath(ofDevice: directory))
    }

    /// The results before SQLite: imported on first open, then renamed `results.jsonl.imported`.
    static func legacyPath(ofDevice directory: String) -> String {
        Path.join(directory, "notifications", "results.jsonl")
    }

    /// A row of an accepted push: its number among its device's rows.
    public struct Row: Sendable, Hashable {
        public let id: Int64
    }

    /// Records an accepted push (before its answer), the push itself included: the row its result will fill.
    public func accept(_ record: AcceptedPushRecord, for device: Device) throws(DatabaseError) -> Row {
        let push = record.push
        let home = home(for: device)
        // Batched (group commit): the pushes taken at once (a folder's devices', a busy device's) share one sync.
        let rows = try writing(home) { database throws(DatabaseError) in
            try database.batchedWrite { transaction throws(DatabaseError) in
                try transaction.execute(
                    """
                    INSERT INTO results (device, seq, apns_id, token, received_at, unique_id, token_kind, push_type,
                        priority, expiration, collapse_id, payload)
                    VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM results WHERE device = ?1),
                        ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                    RETURNING seq
                    """,
                    [
                        .text(home.device), .text(push.apnsID), .text(push.token.lowercased()),
                        .integer(record.receivedAt), .text(record.uniqueID), .text(push.tokenKind.rawValue),
                        .text(push.pushType.rawValue), .integer(Int64(push.priority)), .integer(push.expiration),
                        .text(push.collapseID), .blob(push.payload),
                    ])
            }
        }
        guard let id = rows.first?.integer(0) else {
            throw DatabaseError(code: .other, message: "\(home.path): insert returned no row id")
        }
        return Row(id: id)
    }

    /// Forgets an accepted push that was refused after all (the queue filled or the server began stopping).
    public func withdraw(_ row: Row, for device: Device) throws(DatabaseError) {
        let home = home(for: device)
        try writing(home) { database throws(DatabaseError) in
            try database.execute(
                "DELETE FROM results WHERE device = ? AND seq = ? AND result IS NULL",
                [.text(home.device), .integer(row.id)])
        }
    }

    /// Pushes accepted and never run: a previous run of the server stopped between their 200 and their result.
    /// Oldest first.
    public func unfinished(for device: Device) throws(DatabaseError) -> [(Row, AcceptedPushRecord)] {
        let home = home(for: device)
        return try database(for: home).execute(
            "SELECT \(Self.unfinishedColumns) FROM results WHERE device = ? AND result IS NULL AND payload IS NOT NULL ORDER BY seq",
            [.text(home.device)]
        ).compactMap(Self.unfinishedRecord)
    }

    /// ``unfinished(for:)`` of many devices, oldest first for each, with one query for all of a folder's: what a
    /// server reads at start. A database that cannot be opened or read fails its devices alone.
    public func unfinished(for devices: [Device]) -> (
        found: [(device: Device, row: Row, record: AcceptedPushRecord)],
        failed: [(device: Device, error: DatabaseError)]
    ) {
        var found: [(device: Device, row: Row, record: AcceptedPushRecord)] = []
        var failed: [(device: Device, error: DatabaseError)] = []
        var folders: [String: (home: Home, devices: [String: Device])] = [:]
        var order: [String] = []
        for device in devices {
            let home = home(for: device)
            guard home.folder != nil else {
                do {
                    found += try unfinished(for: device).map { (device, $0.0, $0.1) }
                } catch {
                    failed.append((device, error))
                }
                continue
            }
            if folders[home.path] == nil { order.append(home.path) }
            folders[home.path, default: (home, [:])].devices[home.device] = device
        }
        for path in order {
            guard let (home, members) = folders[path] else { continue }
            do {
                let rows = try database(for: home).execute(
                    "SELECT \(Self.unfinishedColumns), device FROM results WHERE result IS NULL AND payload IS NOT NULL ORDER BY device, seq"
                )
                for row in rows {
                    guard let name = row.text(12), let device = members[name],
                        let (id, record) = Self.unfinishedRecord(row)
                    else { continue }
                    found.append((device, id, record))
                }
            } catch {
                failed += members.values.map { ($0, error) }
            }
        }
        return (found, failed)
    }

    private static let unfinishedColumns = """
        seq, apns_id, token, received_at, unique_id, token_kind, push_type, priority, expiration, collapse_id, payload,
            delivered
        """

    /// A row of ``unfinishedColumns`` as the push it keeps.
    private static func unfinishedRecord(_ row: SQLRow) -> (Row, AcceptedPushRecord)? {
        guard let id = row.integer(0), let apnsID = row.text(1), let token = row.text(2),
            let pushType = row.text(6).flatMap({ PushType(rawValue: $0) }), let payload = row.blob(10)
        else { return nil }
        let push = AcceptedPush(
            apnsID: apnsID, token: token, tokenKind: row.text(5).flatMap({ TokenKind(rawValue: $0) }) ?? .remote,
            pushType: pushType, priority: Int(row.integer(7) ?? 10), payload: payload, expiration: row.integer(8),
            collapseID: row.text(9))
        var record = AcceptedPushRecord(push: push, uniqueID: row.text(4) ?? "", receivedAt: row.integer(3) ?? 0)
        record.handover = row.text(11).flatMap { try? ExtensionHandover(json: JSON.parse($0)) }
        return (Row(id: id), record)
    }

    /// Keeps what the push's extension handed over with its content, until its result is recorded (one that no
    /// longer reads back makes the push run its extension again).
    public func keep(_ handover: ExtensionHandover, of row: Row, for device: Device) throws(DatabaseError) {
        let delivered = handover.json.serialized()
        let home = home(for: device)
        try writing(home) { database throws(DatabaseError) in
            try database.batchedWrite { transaction throws(DatabaseError) in
                try transaction.execute(
                    "UPDATE results SET delivered = ? WHERE device = ? AND seq = ? AND result IS NULL",
                    [.text(delivered), .text(home.device), .integer(row.id)])
            }
        }
    }

    /// Fills a push's row with its result (and lets go of the push's payload and delivered content, which only a
    /// rerun needed).
    ///
    /// Crash-safe, not synced: what this write would lose to a power loss can be made again. The push was acknowledged
    /// by its durable `accept`, and what its extension delivered by the durable `keep` before `content-accepted`; a
    /// row that loses this update still holds both, so the server starting again records the result from the kept
    /// content (as after any crash between the two). A result can then be announced twice (a callback, an event),
    /// never lost. One sync fewer per push: the syncs were a sixth of the server's CPU on this VM's disk.
    public func complete(_ row: Row, result: JSON, for device: Device) throws(DatabaseError) {
        let document = result.serialized()
        let home = home(for: device)
        try writing(home) { database throws(DatabaseError) in
            // Batched: it rides along with the accepts and keeps syncing at the same time, or goes with other results.
            try database.batchedWrite(.crashSafe) { transaction throws(DatabaseError) in
                try transaction.execute(
                    """
                    UPDATE results SET outcome = ?, recorded_at = ?, result = ?, payload = NULL, delivered = NULL
                    WHERE device = ? AND seq = ?
                    """,
                    [
                        .text(result["outcome"]?.stringValue), .integer(result["recorded_at"]?.intValue),
                        .text(document), .text(home.device), .integer(row.id),
                    ])
            }
        }
    }

    /// The push's answer never reached the client: say so in its row.
    public func markUnacknowledged(_ row: Row, for device: Device) throws(DatabaseError) {
        let home = home(for: device)
        try writing(home) { database throws(DatabaseError) in
            try database.execute(
                "UPDATE results SET acknowledged = 0 WHERE device = ? AND seq = ?",
                [.text(home.device), .integer(row.id)])
        }
    }

    /// The most rows a GET holds in memory at once: a larger `limit` is read and sent page by page
    /// (``results(for:limit:since:before:)``), so an answer of any size costs one page of memory.
    public static let pageRows = 256

    /// Results of pushes that have run, newest first: at most `limit`, only those with a row id after `since` and
    /// before `before` (the last id of the previous page). Each is the recorded document plus `id` (the row, for
    /// `since`) and `acknowledged`. Reads `limit` rows by the device's index whatever the history.
    public func results(
        for device: Device, limit: Int, since: Int64 = 0, before: Int64 = .max
    ) throws(DatabaseError) -> [JSON] {
        let home = home(for: device)
        let rows = try database(for: home).execute(
            """
            SELECT seq, acknowledged, result FROM results
            WHERE device = ? AND seq > ? AND seq < ? AND result IS NOT NULL
            ORDER BY seq DESC LIMIT ?
            """, [.text(home.device), .integer(since), .integer(before), .integer(Int64(limit))])
        return rows.compactMap { row in
            guard let id = row.integer(0), let text = row.text(2), var object = (try? JSON.parse(text))?.objectValue
            else { return nil }
            object["id"] = .int(id)
            object["acknowledged"] = .bool(row.bool(1))
            return .object(object)
        }
    }

    /// The group commits of `device`'s database so far (its folder's, for a folder's device).
    func batchedWrites(for device: Device) throws(DatabaseError) -> (batches: Int, waiting: Int) {
        try database(for: home(for: device)).batchedWrites
    }

    /// Runs one write; after a failure the database is closed, so the next write opens it afresh (a file made
    /// writable again, a disk with room again, a file moved aside).
    @discardableResult
    private func writing<T>(_ home: Home, _ body: (Database) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        let database = try self.database(for: home)
        do {
            return try body(database)
        } catch {
            open.withLock { open in
                if open.databases[home.path]?.database === database { open.databases[home.path] = nil }
            }
            throw error
        }
    }

    /// The database of `home`, opened (and created, and older files imported) on first use. A failed open is not
    /// kept: the next push tries again.
    private func database(for home: Home) throws(DatabaseError) -> Database {
        if let found = cached(home.path) { return found }
        guard home.folder != nil else { return try opening(home) }
        // One thread opens a folder's database and imports its devices' own files; the pushes of its other devices
        // that come meanwhile wait for it rather than import the same files at the same time.
        return try folderOpening.withLock { _ throws(DatabaseError) -> Database in
            if let found = cached(home.path) { return found }
            return try opening(home)
        }
    }

    /// The open database at `path`, marked as used now.
    private func cached(_ path: String) -> Database? {
        open.withLock { open -> Database? in
            guard let database = open.databases[path]?.database else { return nil }
            open.clock += 1
            open.databases[path] = (database, open.clock)
            return database
        }
    }

    /// Opens `home`'s database and keeps it open.
    private func opening(_ home: Home) throws(DatabaseError) -> Database {
        let path = home.path
        do {
            try FileSystem.createDirectory(Path.dirname(path))
        } catch {
            throw DatabaseError(code: .cannotOpen, message: "\(Path.dirname(path)): cannot create: \(error)")
        }
        let database: Database
        if let folder = home.folder {
            // Every push of the folder's devices: a larger page cache, and a log kept at the size it reaches
            // between two checkpoints (~4 MB), so its synced commits never grow it.
            database = try Database(
                path: path, schema: Self.schema,
                options: Database.Options(cacheKilobytes: 4096, logKeptBytes: 8 << 20))
            try importMembers(of: folder, into: database)
        } else {
            // A small page cache: one connection per device for the server's life, appends and reads by key.
            database = try Database(path: path, schema: Self.schema, options: Database.Options(cacheKilobytes: 512))
            let directory = Path.dirname(Path.dirname(path))
            try importLegacy(into: database, directory: directory)
            try importFromFolder(into: database, directory: directory)
        }
        // A database closed here while a write on it is still running is closed when that write lets go of it.
        return open.withLock { open in
            open.clock += 1
            if let already = open.databases[path]?.database {
                open.databases[path] = (already, open.clock)
                return already
            }
            if open.databases.count >= maxOpen, let oldest = open.databases.min(by: { $0.value.used < $1.value.used }) {
                open.databases[oldest.key] = nil
            }
            open.databases[path] = (database, open.clock)
            return database
        }
    }

    /// Imports into a folder's database the rows of its devices' own `results.db` (a device served alone, or by an
    /// older nse), each row keeping its number, then renames each `results.db.imported`. A row there already (an
    /// import that committed but was not renamed: the server died in between) is left as it is.
    private func importMembers(of folder: String, into database: Database) throws(DatabaseError) {
        let names: [String]
        do { names = try FileSystem.contents(ofDirectory: folder) } catch {
            throw DatabaseError(code: .cannotOpen, message: "\(folder): cannot list: \(error)")
        }
        for name in names.sorted() {
            let directory = Path.join(folder, name)
            let own = Self.path(ofDevice: directory)
            guard FileSystem.exists(own) || FileSystem.exists(Self.legacyPath(ofDevice: directory)) else { continue }
            // Opened on its own first: brought to this schema (numbers kept), older JSON lines imported.
            do {
                let member = try Database(path: own, schema: Self.schema, options: Database.Options(cacheKilobytes: 64))
                try importLegacy(into: member, directory: directory)
            }
            let imported = try Self.attaching(own, as: "member", to: database) { () throws(DatabaseError) in
                try database.write { transaction throws(DatabaseError) in
                    try transaction.execute(
                        """
                        INSERT OR IGNORE INTO main.results (device, \(Self.movedColumns))
                        SELECT ?, \(Self.movedColumns) FROM member.results ORDER BY seq
                        """, [.text(name)])
                    return transaction.changes
                }
            }
            // The file and its log go together (the log may hold the last commits); the index file is rebuilt.
            for suffix in ["-wal", ""] where FileSystem.exists(own + suffix) {
                if rename(own + suffix, own + ".imported" + suffix) != 0 {
                    let reason = String(cString: strerror(errno))
                    throw DatabaseError(code: .other, message: "\(own + suffix): imported but cannot rename: \(reason)")
                }
            }
            _ = unlink(own + "-shm")
            logger.notice(
                "a device's results.db imported into its folder's database",
                metadata: ["device.folder": .string(directory), "store.imported": .stringConvertible(imported)])
        }
    }

    /// Moves into a device's own database its rows in its folder's (the folder was served before, the device is
    /// served alone now), each keeping its number: its history reads on, and a push its folder's server left unrun
    /// runs here. Copied first, then deleted there, in two commits: a server that dies in between finds them in both
    /// and copies none twice.
    private func importFromFolder(into database: Database, directory: String) throws(DatabaseError) {
        let folderDatabase = Self.folderPath(Path.dirname(directory))
        guard FileSystem.exists(folderDatabase) else { return }
        let name = Path.basename(directory)
        let moved = try Self.attaching(folderDatabase, as: "folder", to: database) { () throws(DatabaseError) in
            let moved = try database.write { transaction throws(DatabaseError) in
                try transaction.execute(
                    """
                    INSERT OR IGNORE INTO main.results (device, \(Self.movedColumns))
                    SELECT '', \(Self.movedColumns) FROM folder.results WHERE device = ? ORDER BY seq
                    """, [.text(name)])
                return try transaction.execute("SELECT count(*) FROM folder.results WHERE device = ?", [.text(name)])
                    .first?.integer(0).map(Int.init) ?? 0
            }
            if moved > 0 {
                try database.write { transaction throws(DatabaseError) in
                    try transaction.execute("DELETE FROM folder.results WHERE device = ?", [.text(name)])
                }
            }
            return moved
        }
        if moved > 0 {
            logger.notice(
                "a device's rows moved from its folder's database into its own",
                metadata: ["device.folder": .string(directory), "store.imported": .stringConvertible(moved)])
        }
    }

    /// What a row keeps when it moves from one file to another (its `device` is the receiving file's name for it).
    private static let movedColumns = """
        seq, apns_id, token, outcome, received_at, recorded_at, acknowledged, result, unique_id, token_kind, push_type,
            priority, expiration, collapse_id, payload, delivered
        """

    /// Runs `body` with the database at `path` attached to `database` as `alias`, detached after however it ends.
    private static func attaching<T>(
        _ path: String, as alias: String, to database: Database, _ body: () throws(DatabaseError) -> T
    ) throws(DatabaseError) -> T {
        try database.execute("ATTACH DATABASE ? AS \(alias)", [.text(path)])
        let value: T
        do { value = try body() } catch {
            _ = try? database.execute("DETACH DATABASE \(alias)")
            throw error
        }
        try database.execute("DETACH DATABASE \(alias)")
        return value
    }

    /// Imports `results.jsonl` (nse before SQLite) in one transaction, then renames it `results.jsonl.imported`.
    /// Lines that are not a JSON object (a torn last line after a full disk) are skipped and counted in the log.
    private func importLegacy(into database: Database, directory: String) throws(DatabaseError) {
        let legacy = Self.legacyPath(ofDevice: directory)
        guard FileSystem.exists(legacy) else { return }
        let text: String
        do {
            guard let read = try FileSystem.readText(legacy, limit: 1 << 40) else { return }
            text = read
        } catch {
            throw DatabaseError(code: .other, message: "\(legacy): cannot read for import: \(error)")
        }
        var imported = 0
        var skipped = 0
        try database.write { transaction throws(DatabaseError) in
            // Rows already here: an import that committed but was not renamed (the server died in between).
            guard (try transaction.execute("SELECT COUNT(*) FROM results").first?.integer(0) ?? 0) == 0 else { return }
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                guard let object = (try? JSON.parse(String(line)))?.objectValue,
                    let apnsID = object["apns_id"]?.stringValue
                else {
                    skipped += 1
                    continue
                }
                let recordedAt = object["recorded_at"]?.intValue ?? 0
                try transaction.execute(
                    """
                    INSERT INTO results (seq, apns_id, token, outcome, received_at, recorded_at, result)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .integer(Int64(imported + 1)), .text(apnsID), .text(object["token"]?.stringValue ?? ""),
                        .text(object["outcome"]?.stringValue),
                        .integer(object["received_at"]?.intValue ?? recordedAt), .integer(recordedAt),
                        .text(JSON.object(object).serialized()),
                    ])
                imported += 1
            }
        }
        if rename(legacy, legacy + ".imported") != 0 {
            let reason = String(cString: strerror(errno))
            throw DatabaseError(code: .other, message: "\(legacy): imported but cannot rename: \(reason)")
        }
        logger.notice(
            "results.jsonl imported into results.db",
            metadata: [
                "device.folder": .string(directory), "store.imported": .stringConvertible(imported),
                "store.skipped": .stringConvertible(skipped),
            ])
    }
}

/// What the store keeps of an accepted push until it has run: the push, the `apns-unique-id` of its answer, when it
/// arrived, and the content its extension delivered once it has.
public struct AcceptedPushRecord: Sendable {
    public var push: AcceptedPush
    public var uniqueID: String
    /// Unix milliseconds.
    public var receivedAt: Int64
    /// What its extension handed over with its content before the server stopped, if it got that far.
    public var handover: ExtensionHandover?

    public init(push: AcceptedPush, uniqueID: String, receivedAt: Int64) {
        self.push = push
        self.uniqueID = uniqueID
        self.receivedAt = receivedAt
    }
}
