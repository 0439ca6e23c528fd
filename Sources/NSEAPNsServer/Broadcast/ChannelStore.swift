public import NSEDatabase
public import NSEDevice
import NSESystem

/// What APNs keeps of broadcast channels, in one SQLite database beside the served devices (`channels.db`, path
/// below): the channels of each app and environment, deleted ones kept as such (a broadcast to one is
/// `ChannelNotRegistered`, to an id never made `BadChannelId`, as APNs answers), and each broadcast from its 200 until
/// it has been handed to every subscribed activity, so a server that stops in between hands it out when it starts
/// again.
public final class ChannelStore: Sendable {
    static let schema = [
        """
        CREATE TABLE channels (
            id TEXT PRIMARY KEY,
            bundle_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            storage_policy INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            deleted_at INTEGER
        );
        CREATE INDEX channels_app ON channels(bundle_id, environment) WHERE deleted_at IS NULL;
        CREATE TABLE broadcasts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            channel_id TEXT NOT NULL,
            request_id TEXT NOT NULL,
            unique_id TEXT NOT NULL,
            priority INTEGER NOT NULL,
            expiration INTEGER,
            collapse_id TEXT,
            payload BLOB NOT NULL,
            received_at INTEGER NOT NULL
        );
        """
    ]

    /// The most channels an app may have in one environment unless told (`--channel-limit`): 10,000, the limit
    /// providers report (`CannotCreateChannelConfig` past it).
    public static let defaultLimit = 10_000

    /// What a channel id names in an app and environment.
    public enum Lookup: Sendable, Equatable {
        case found(BroadcastChannel)
        /// Made, then deleted: `ChannelNotRegistered`.
        case deleted
        /// Never made here: `BadChannelId`.
        case unknown
    }

    /// A broadcast from its 200 until it has been handed out.
    public struct Broadcast: Sendable {
        public let id: Int64
        public let channel: BroadcastChannel
        public let requestID: String
        public let uniqueID: String
        public let priority: Int
        public let expiration: Int64?
        public let collapseID: String?
        public let payload: [UInt8]
        /// Unix milliseconds.
        public let receivedAt: Int64

        public init(
            id: Int64, channel: BroadcastChannel, requestID: String, uniqueID: String, priority: Int,
            expiration: Int64?, collapseID: String?, payload: [UInt8], receivedAt: Int64
        ) {
            self.id = id
            self.channel = channel
            self.requestID = requestID
            self.uniqueID = uniqueID
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
            self.payload = payload
            self.receivedAt = receivedAt
        }
    }

    let path: String
    /// Channels an app may have per environment.
    let limit: Int
    private let database: Database

    /// Opens (creating) the database at `path`.
    public init(path: String, limit: Int = ChannelStore.defaultLimit) throws(DatabaseError) {
        self.path = path
        self.limit = limit
        do { try FileSystem.createDirectory(Path.dirname(path)) } catch {
            throw DatabaseError(code: .cannotOpen, message: error.description)
        }
        database = try Database(path: path, schema: Self.schema)
    }

    /// Where a server keeps its channels unless told (`nse serve --channels FILE`): beside its first device
    /// (`DIR/notifications/channels.db`), else in its first folder of devices (`FOLDER/.nse-channels.db`). Either is
    /// covered by the server's lock on that device or folder, so two servers never share it by default.
    public static func defaultPath(devices: [Device], folder: [DeviceFolder.Entry]) -> String? {
        if let device = devices.first { return Path.join(device.directory, "notifications", "channels.db") }
        if let entry = folder.first { return Path.join(Path.dirname(entry.directory), ".nse-channels.db") }
        return nil
    }

    /// Keeps a new channel, durably; false when its app has `limit` channels in that environment already.
    func create(_ channel: BroadcastChannel) throws(DatabaseError) -> Bool {
        let limit = Int64(self.limit)
        return try database.write { transaction throws(DatabaseError) -> Bool in
            let count =
                try transaction.execute(
                    "SELECT COUNT(*) FROM channels WHERE bundle_id = ? AND environment = ? AND deleted_at IS NULL",
                    [.text(channel.bundleID), .text(channel.environment)]
                ).first?.integer(0) ?? 0
            guard count < limit else { return false }
            try transaction.execute(
                "INSERT INTO channels (id, bundle_id, environment, storage_policy, created_at) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(channel.id), .text(channel.bundleID), .text(channel.environment),
                    .integer(channel.storagePolicy.rawValue), .integer(channel.createdAt),
                ])
            return true
        }
    }

    /// What `id` names for the app in the environment.
    func lookup(_ id: String, bundleID: String, environment: String) throws(DatabaseError) -> Lookup {
        let rows = try database.execute(
            """
            SELECT storage_policy, created_at, deleted_at FROM channels
            WHERE id = ? AND bundle_id = ? AND environment = ?
            """, [.text(id), .text(bundleID), .text(environment)])
        guard let row = rows.first else { return .unknown }
        if row.integer(2) != nil { return .deleted }
        return .found(
            BroadcastChannel(
                id: id, bundleID: bundleID, environment: environment,
                storagePolicy: BroadcastChannel.StoragePolicy(rawValue: row.integer(0) ?? 0) ?? .noStorage,
                createdAt: row.integer(1) ?? 0))
    }

    /// The app's channels in the environment, oldest first.
    func channels(bundleID: String, environment: String) throws(DatabaseError) -> [String] {
        try database.execute(
            "SELECT id FROM channels WHERE bundle_id = ? AND environment = ? AND deleted_at IS NULL ORDER BY created_at, id",
            [.text(bundleID), .text(environment)]
        ).compactMap { $0.text(0) }
    }

    /// Deletes a channel (kept as deleted); false when there is no such channel, or it was deleted already.
    func delete(_ id: String, bundleID: String, environment: String, now: Int64) throws(DatabaseError) -> Bool {
        try database.write { transaction throws(DatabaseError) -> Bool in
            try transaction.execute(
                """
                UPDATE channels SET deleted_at = ?
                WHERE id = ? AND bundle_id = ? AND environment = ? AND deleted_at IS NULL
                """, [.integer(now), .text(id), .text(bundleID), .text(environment)])
            return transaction.changes > 0
        }
    }

    /// Keeps a broadcast, durably, before its 200.
    func accept(
        on channel: BroadcastChannel, requestID: String, uniqueID: String, priority: Int, expiration: Int64?,
        collapseID: String?, payload: [UInt8], now: Int64
    ) throws(DatabaseError) -> Broadcast {
        let rows = try database.execute(
            """
            INSERT INTO broadcasts (channel_id, request_id, unique_id, priority, expiration, collapse_id, payload,
                received_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """,
            [
                .text(channel.id), .text(requestID), .text(uniqueID), .integer(Int64(priority)),
                .integer(expiration), .text(collapseID), .blob(payload), .integer(now),
            ])
        guard let id = rows.first?.integer(0) else {
            throw DatabaseError(code: .other, message: "\(path): insert returned no row id")
        }
        return Broadcast(
            id: id, channel: channel, requestID: requestID, uniqueID: uniqueID, priority: priority,
            expiration: expiration, collapseID: collapseID, payload: payload, receivedAt: now)
    }

    /// Forgets a broadcast once every subscribed activity has its push (recorded in its device's results).
    func handedOut(_ broadcast: Broadcast) throws(DatabaseError) {
        try database.write(.crashSafe) { transaction throws(DatabaseError) in
            try transaction.execute("DELETE FROM broadcasts WHERE id = ?", [.integer(broadcast.id)])
        }
    }

    /// Broadcasts answered 200 and not yet handed out (a previous run stopped in between), oldest first.
    func unfinished() throws(DatabaseError) -> [Broadcast] {
        let rows = try database.execute(
            """
            SELECT b.id, b.request_id, b.unique_id, b.priority, b.expiration, b.collapse_id, b.payload, b.received_at,
                c.id, c.bundle_id, c.environment, c.storage_policy, c.created_at
            FROM broadcasts b JOIN channels c ON c.id = b.channel_id ORDER BY b.id
            """)
        return rows.compactMap { row in
            guard let id = row.integer(0), let requestID = row.text(1), let payload = row.blob(6),
                let channelID = row.text(8), let bundleID = row.text(9), let environment = row.text(10)
            else { return nil }
            let channel = BroadcastChannel(
                id: channelID, bundleID: bundleID, environment: environment,
                storagePolicy: BroadcastChannel.StoragePolicy(rawValue: row.integer(11) ?? 0) ?? .noStorage,
                createdAt: row.integer(12) ?? 0)
            return Broadcast(
                id: id, channel: channel, requestID: requestID, uniqueID: row.text(2) ?? "",
                priority: Int(row.integer(3) ?? 10), expiration: row.integer(4), collapseID: row.text(5),
                payload: payload, receivedAt: row.integer(7) ?? 0)
        }
    }
}
