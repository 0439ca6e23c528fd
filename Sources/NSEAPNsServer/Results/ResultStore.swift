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

/// Where pushes and their results live: one SQLite database per device, `DIR/notifications/results.db`.
///
/// A push is written when it is accepted, before its 200 (``accept(_:for:)``): a push answered 200 is on disk even
/// if the server dies before it runs. Its result fills the same row when the extension is done
/// (``complete(_:result:for:)``). If the answer could not be written to the client (connection gone, stream
/// reset), the row is marked not acknowledged (``markUnacknowledged(_:for:)``) and reads say `"acknowledged": false`:
/// the provider never saw the 200 and may send the push again.
public final class ResultStore: Sendable {
    /// Version 1: one row per accepted push; `result` (the JSON document) is NULL until the push has run.
    /// Version 2: the push itself is kept until then. Version 3: so is the content its extension delivered.
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
    ]

    /// The open databases, by path, with when each was last used. At most ``maxOpen``: a server of 10,000
    /// devices keeps the busy ones open and closes the least recently used (each open one holds three descriptors
    /// and its page cache).
    private struct Open {
        var databases: [String: (database: Database, used: UInt64)] = [:]
        var clock: UInt64 = 0
    }

    private let open = Mutex(Open())
    private let logger: Logger
    /// Databases kept open at once.
    public let maxOpen: Int
    /// How many databases a server keeps open unless told (`nse serve --open-databases`): enough for the devices a
    /// busy server pushes to in turn (with fewer, every push to a device seen before would open its database again:
    /// a schema read, its write-ahead log's index rebuilt), each ~180 KB and three descriptors.
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

    /// Closes the databases of the devices in `directories` (given back to another node of the fleet, which writes
    /// them from now on). One a write still holds is closed when that write lets go of it.
    public func close(directories: some Sequence<String>) {
        let paths = Set(directories.map { Path.join($0, "notifications", "results.db") })
        open.withLock { open in
            for path in paths { open.databases[path] = nil }
        }
    }

    /// `DIR/notifications/results.db`.
    public static func path(for device: Device) -> String {
        Path.join(device.directory, "notifications", "results.db")
    }

    /// The results before SQLite: imported on first open, then renamed `results.jsonl.imported`.
    static func legacyPath(for device: Device) -> String {
        Path.join(device.directory, "notifications", "results.jsonl")
    }

    /// A row of an accepted push.
    public struct Row: Sendable, Hashable {
        public let id: Int64
    }

    /// Opens (creating) the device's database ahead of its first push, so that push pays no schema creation.
    public func prepare(_ device: Device) throws(DatabaseError) {
        _ = try database(for: device)
    }

    /// Records an accepted push (before its answer), the push itself included: the row its result will fill.
    public func accept(_ record: AcceptedPushRecord, for device: Device) throws(DatabaseError) -> Row {
        let push = record.push
        // Batched (group commit): the pushes a busy device takes at once share one sync.
        let rows = try writing(for: device) { database throws(DatabaseError) in
            try database.batchedWrite { transaction throws(DatabaseError) in
                try transaction.execute(
                    """
                    INSERT INTO results (apns_id, token, received_at, unique_id, token_kind, push_type, priority,
                        expiration, collapse_id, payload)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                    """,
                    [
                        .text(push.apnsID), .text(push.token.lowercased()), .integer(record.receivedAt),
                        .text(record.uniqueID), .text(push.tokenKind.rawValue), .text(push.pushType.rawValue),
                        .integer(Int64(push.priority)), .integer(push.expiration), .text(push.collapseID),
                        .blob(push.payload),
                    ])
            }
        }
        guard let id = rows.first?.integer(0) else {
            throw DatabaseError(code: .other, message: "\(Self.path(for: device)): insert returned no row id")
        }
        return Row(id: id)
    }

    /// Forgets an accepted push that was refused after all (the queue filled or the server began stopping).
    public func withdraw(_ row: Row, for device: Device) throws(DatabaseError) {
        try writing(for: device) { database throws(DatabaseError) in
            try database.execute("DELETE FROM results WHERE id = ? AND result IS NULL", [.integer(row.id)])
        }
    }

    /// Pushes accepted and never run: a previous run of the server stopped between their 200 and their result.
    /// Oldest first.
    public func unfinished(for device: Device) throws(DatabaseError) -> [(Row, AcceptedPushRecord)] {
        let rows = try database(for: device).execute(
            """
            SELECT id, apns_id, token, received_at, unique_id, token_kind, push_type, priority, expiration,
                collapse_id, payload, delivered
            FROM results WHERE result IS NULL AND payload IS NOT NULL ORDER BY id
            """)
        return rows.compactMap { row in
            guard let id = row.integer(0), let apnsID = row.text(1), let token = row.text(2),
                let pushType = row.text(6).flatMap({ PushType(rawValue: $0) }), let payload = row.blob(10)
            else { return nil }
            let push = AcceptedPush(
                apnsID: apnsID, token: token, tokenKind: row.text(5).flatMap({ TokenKind(rawValue: $0) }) ?? .remote,
                pushType: pushType, priority: Int(row.integer(7) ?? 10), payload: payload, expiration: row.integer(8),
                collapseID: row.text(9))
            var record = AcceptedPushRecord(
                push: push, uniqueID: row.text(4) ?? "", receivedAt: row.integer(3) ?? 0)
            record.handover = row.text(11).flatMap { try? ExtensionHandover(json: JSON.parse($0)) }
            return (Row(id: id), record)
        }
    }

    /// Keeps what the push's extension handed over with its content, until its result is recorded (one that no
    /// longer reads back makes the push run its extension again).
    public func keep(_ handover: ExtensionHandover, of row: Row, for device: Device) throws(DatabaseError) {
        let delivered = handover.json.serialized()
        try writing(for: device) { database throws(DatabaseError) in
            try database.batchedWrite { transaction throws(DatabaseError) in
                try transaction.execute(
                    "UPDATE results SET delivered = ? WHERE id = ? AND result IS NULL",
                    [.text(delivered), .integer(row.id)])
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
        try writing(for: device) { database throws(DatabaseError) in
            // Batched: it rides along with the accepts and keeps syncing at the same time, or goes with other results.
            try database.batchedWrite(.crashSafe) { transaction throws(DatabaseError) in
                try transaction.execute(
                    """
                    UPDATE results SET outcome = ?, recorded_at = ?, result = ?, payload = NULL, delivered = NULL
                    WHERE id = ?
                    """,
                    [
                        .text(result["outcome"]?.stringValue), .integer(result["recorded_at"]?.intValue),
                        .text(document), .integer(row.id),
                    ])
            }
        }
    }

    /// The push's answer never reached the client: say so in its row.
    public func markUnacknowledged(_ row: Row, for device: Device) throws(DatabaseError) {
        try writing(for: device) { database throws(DatabaseError) in
            try database.execute("UPDATE results SET acknowledged = 0 WHERE id = ?", [.integer(row.id)])
        }
    }

    /// The most rows a GET holds in memory at once: a larger `limit` is read and sent page by page
    /// (``results(for:limit:since:before:)``), so an answer of any size costs one page of memory.
    public static let pageRows = 256

    /// Results of pushes that have run, newest first: at most `limit`, only those with a row id after `since` and
    /// before `before` (the last id of the previous page). Each is the recorded document plus `id` (the row, for
    /// `since`) and `acknowledged`. Reads `limit` rows by the primary key whatever the history.
    public func results(
        for device: Device, limit: Int, since: Int64 = 0, before: Int64 = .max
    ) throws(DatabaseError) -> [JSON] {
        let rows = try database(for: device).execute(
            """
            SELECT id, acknowledged, result FROM results WHERE result IS NOT NULL AND id > ? AND id < ?
            ORDER BY id DESC LIMIT ?
            """, [.integer(since), .integer(before), .integer(Int64(limit))])
        return rows.compactMap { row in
            guard let id = row.integer(0), let text = row.text(2), var object = (try? JSON.parse(text))?.objectValue
            else { return nil }
            object["id"] = .int(id)
            object["acknowledged"] = .bool(row.bool(1))
            return .object(object)
        }
    }

    /// Runs one write; after a failure the database is closed, so the next write opens it afresh (a file made
    /// writable again, a disk with room again, a file moved aside).
    @discardableResult
    private func writing<T>(for device: Device, _ body: (Database) throws(DatabaseError) -> T) throws(DatabaseError)
        -> T
    {
        let database = try self.database(for: device)
        do {
            return try body(database)
        } catch {
            let path = Self.path(for: device)
            open.withLock { open in
                if open.databases[path]?.database === database { open.databases[path] = nil }
            }
            throw error
        }
    }

    /// The device's database, opened (and created, and the old JSON lines imported) on first use. A failed open is
    /// not kept: the next push tries again.
    private func database(for device: Device) throws(DatabaseError) -> Database {
        let path = Self.path(for: device)
        let found = open.withLock { open -> Database? in
            guard let database = open.databases[path]?.database else { return nil }
            open.clock += 1
            open.databases[path] = (database, open.clock)
            return database
        }
        if let found { return found }
        do {
            try FileSystem.createDirectory(Path.dirname(path))
        } catch {
            throw DatabaseError(code: .cannotOpen, message: "\(Path.dirname(path)): cannot create: \(error)")
        }
        // A small page cache: one connection per device for the server's life, appends and reads by key.
        let database = try Database(path: path, schema: Self.schema, options: Database.Options(cacheKilobytes: 512))
        try importLegacy(into: database, for: device)
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

    /// Imports `results.jsonl` (nse before SQLite) in one transaction, then renames it `results.jsonl.imported`.
    /// Lines that are not a JSON object (a torn last line after a full disk) are skipped and counted in the log.
    private func importLegacy(into database: Database, for device: Device) throws(DatabaseError) {
        let legacy = Self.legacyPath(for: device)
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
                    "INSERT INTO results (apns_id, token, outcome, received_at, recorded_at, result) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        .text(apnsID), .text(object["token"]?.stringValue ?? ""), .text(object["outcome"]?.stringValue),
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
                "device.folder": .string(device.directory), "store.imported": .stringConvertible(imported),
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
