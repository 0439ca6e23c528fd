import Logging
import NIOCore
import NSEAPNsServer
import NSESystem
import PostgresNIO
import Synchronization

/// The fleet's broadcast channels and broadcasts (``FleetChannels``). A broadcast's row is written before its 200,
/// in one transaction with a row for each device folder any node's row names (`serves`): what it is owed to. Every
/// row, those of nodes taken over too: between a takeover's mark and its move of the folders to the taker (the
/// taker reads them meanwhile, seconds for a large folder) only the stopped node's row names them. Each node looks for what is owed to the folders its own row names
/// (``run(until:)``: at once after a broadcast it took, else four times a second, so a broadcast taken by
/// another node, and what a folder taken over or given back brings, are found within 250 ms), hands each out to
/// the devices of that folder, and then deletes that row, only if its row still names the folder: a folder given
/// away meanwhile stays owed, to the node it went to. The broadcast's row goes with its last folder.
final class FleetBroadcasts: Sendable {
    /// What this node's server does with one folder's share (``FleetChannels/handOutBroadcasts(_:)``).
    typealias HandOut = @Sendable (ChannelStore.Broadcast, String) async -> Bool

    private let connection: FleetConnection
    private let node: String
    private let handOut = Mutex<HandOut?>(nil)
    /// Whether this node has written its row for this run (``start()``): until then the row read is a previous
    /// run's, which may name folders this run does not serve.
    private let joined = Mutex(false)
    private let wakeup = FleetSignal()

    /// Wakes the hand-out loop: the node stops (``run(until:)`` ends at once, not after its 250 ms).
    func wake() {
        wakeup.wake()
    }

    init(connection: FleetConnection, node: String) {
        self.connection = connection
        self.node = node
    }

    func handOut(with handOut: @escaping HandOut) {
        self.handOut.withLock { $0 = handOut }
    }

    /// The node's row says what this run serves: hands out from now on. (Before, a node restarted within its lease
    /// read its previous run's row, naming folders it had taken over and no longer serves, found no device of theirs
    /// here and marked them done: their broadcasts were lost.)
    func start() {
        joined.withLock { $0 = true }
        wakeup.wake()
    }

    /// Keeps `channel` unless its app has `limit` channels in its environment: counted and inserted under a lock of
    /// the app's and environment's own, so two nodes making the last one at once make one.
    func create(_ channel: BroadcastChannel, limit: Int) async throws(FleetError) -> Bool {
        try await connection.attempt("channel not made") {
            try await connection.transaction { transaction in
                let app = channel.bundleID + " " + channel.environment
                try await transaction.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended(\(app), 0))", logger: connection.logger)
                var count = 0
                for try await found in try await transaction.query(
                    """
                    SELECT count(*) FROM nse_fleet_channels
                    WHERE bundle_id = \(channel.bundleID) AND environment = \(channel.environment) AND deleted_at IS NULL
                    """, logger: connection.logger
                ).decode(Int.self) {
                    count = found
                }
                guard count < limit else { return false }
                try await transaction.query(
                    """
                    INSERT INTO nse_fleet_channels (id, bundle_id, environment, storage_policy, created_at)
                    VALUES (\(channel.id), \(channel.bundleID), \(channel.environment),
                        \(Int(channel.storagePolicy.rawValue)), \(channel.createdAt))
                    """, logger: connection.logger)
                return true
            }
        }
    }

    func lookup(_ id: String, bundleID: String, environment: String) async throws(FleetError) -> ChannelStore.Lookup {
        try await connection.attempt("channel not read") {
            for try await (policy, created, deleted) in try await connection.client.query(
                """
                SELECT storage_policy, created_at, deleted_at FROM nse_fleet_channels
                WHERE id = \(id) AND bundle_id = \(bundleID) AND environment = \(environment)
                """, logger: connection.logger
            ).decode((Int, Int64, Int64?).self) {
                guard deleted == nil else { return .deleted }
                return .found(
                    BroadcastChannel(
                        id: id, bundleID: bundleID, environment: environment,
                        storagePolicy: BroadcastChannel.StoragePolicy(rawValue: Int64(policy)) ?? .noStorage,
                        createdAt: created))
            }
            return .unknown
        }
    }

    func channels(bundleID: String, environment: String) async throws(FleetError) -> [String] {
        try await connection.attempt("channels not read") {
            var ids: [String] = []
            for try await id in try await connection.client.query(
                """
                SELECT id FROM nse_fleet_channels
                WHERE bundle_id = \(bundleID) AND environment = \(environment) AND deleted_at IS NULL
                ORDER BY created_at, id
                """, logger: connection.logger
            ).decode(String.self) {
                ids.append(id)
            }
            return ids
        }
    }

    func delete(_ id: String, bundleID: String, environment: String, now: Int64) async throws(FleetError) -> Bool {
        try await connection.attempt("channel not deleted") {
            var deleted = false
            for try await _ in try await connection.client.query(
                """
                UPDATE nse_fleet_channels SET deleted_at = \(now)
                WHERE id = \(id) AND bundle_id = \(bundleID) AND environment = \(environment) AND deleted_at IS NULL
                RETURNING id
                """, logger: connection.logger
            ).decode(String.self) {
                deleted = true
            }
            return deleted
        }
    }

    /// Keeps the broadcast and what it is owed to, in one transaction; this node looks for its share at once.
    func accept(
        on channel: BroadcastChannel, requestID: String, uniqueID: String, priority: Int, expiration: Int64?,
        collapseID: String?, payload: [UInt8], now: Int64
    ) async throws(FleetError) -> ChannelStore.Broadcast {
        let id = try await connection.attempt("broadcast not recorded") {
            try await connection.transaction { transaction in
                var made: Int64?
                for try await id in try await transaction.query(
                    """
                    INSERT INTO nse_fleet_broadcasts (channel_id, request_id, unique_id, priority, expiration,
                        collapse_id, payload, received_at)
                    VALUES (\(channel.id), \(requestID), \(uniqueID), \(priority), \(expiration), \(collapseID),
                        \(ByteBuffer(bytes: payload)), \(now))
                    RETURNING id
                    """, logger: connection.logger
                ).decode(Int64.self) {
                    made = id
                }
                guard let made else { throw FleetError("insert returned no id") }
                try await transaction.query(
                    """
                    INSERT INTO nse_fleet_broadcast_folders (broadcast_id, folder)
                    SELECT DISTINCT \(made), served.folder FROM nse_fleet_nodes n
                    CROSS JOIN LATERAL jsonb_array_elements_text(\(unescaped: Self.served("n"))) AS served(folder)
                    """, logger: connection.logger)
                // Owed to nobody (no node serves a folder): kept no longer.
                try await transaction.query(
                    """
                    DELETE FROM nse_fleet_broadcasts b WHERE b.id = \(made)
                    AND NOT EXISTS (SELECT 1 FROM nse_fleet_broadcast_folders f WHERE f.broadcast_id = \(made))
                    """, logger: connection.logger)
                return made
            }
        }
        wakeup.wake()
        return ChannelStore.Broadcast(
            id: id, channel: channel, requestID: requestID, uniqueID: uniqueID, priority: priority,
            expiration: expiration, collapseID: collapseID, payload: payload, receivedAt: now)
    }

    /// The folders a node's row serves, as one JSON array (SQL, for the row named `row`).
    private static func served(_ row: String) -> String {
        "COALESCE(\(row).serves::jsonb -> 'folders', '[]'::jsonb) || COALESCE(\(row).serves::jsonb -> 'devices', '[]'::jsonb)"
    }

    /// Hands out what is owed to this node's folders until the node stops (or the task is cancelled), once it has
    /// joined: looked for at once after a broadcast this node took, else every 250 ms.
    func run(until stop: FleetSignal) async {
        // Said once when looking starts failing, not four times a second.
        var failing = false
        var nextExpiry: Int64 = 0
        while !Task.isCancelled, !stop.isStopped {
            // A full batch all handed out: more may be owed, looked for at once.
            var more = false
            if joined.withLock({ $0 }), let handOut = handOut.withLock({ $0 }) {
                let now = SystemClock.unixMilliseconds()
                if now >= nextExpiry {
                    nextExpiry = now + 60_000
                    do throws(FleetError) { try await expire(now: now) } catch {
                        connection.logger.warning(
                            "old broadcasts not dropped", metadata: ["fleet.error": .string(error.description)])
                    }
                }
                do throws(FleetError) {
                    let batch = try await owed()
                    var handed = 0
                    for (broadcast, folder) in batch {
                        guard !Task.isCancelled, !stop.isStopped else { return }
                        guard await handOut(broadcast, folder) else { continue }
                        try await done(broadcast.id, folder: folder)
                        handed += 1
                    }
                    more = batch.count == Self.batch && handed == batch.count
                    failing = false
                } catch {
                    if !failing {
                        connection.logger.warning(
                            "broadcasts not handed out", metadata: ["fleet.error": .string(error.description)])
                    }
                    failing = true
                }
            }
            if !more { await wakeup.nap(upTo: .milliseconds(250)) }
        }
    }

    /// Owed hand-outs read at a time.
    static let batch = 100

    /// How long a broadcast stays owed to a folder no node hands it out to (a node removed for good, whose folders
    /// no other node can reach): a day, or until its `apns-expiration` if later (a channel that stores the newest
    /// broadcast keeps it that long), never more than 30 days. Milliseconds.
    static let retention: (least: Int64, most: Int64) = (86_400_000, 30 * 86_400_000)

    /// Drops the broadcasts still owed past ``retention`` (their folder rows go with them), once a minute on every
    /// node: else they would stay in the database, payload and all, for as long as it lives.
    private func expire(now: Int64) async throws(FleetError) {
        let dropped = try await connection.attempt("old broadcasts not dropped") {
            var dropped = 0
            for try await _ in try await connection.client.query(
                """
                DELETE FROM nse_fleet_broadcasts
                WHERE received_at < \(now - Self.retention.least)
                AND (COALESCE(expiration, 0) < \(now / 1000) OR received_at < \(now - Self.retention.most))
                RETURNING id
                """, logger: connection.logger
            ).decode(Int64.self) {
                dropped += 1
            }
            return dropped
        }
        if dropped > 0 {
            connection.logger.notice(
                "broadcasts owed to folders no node served for a day dropped",
                metadata: ["broadcast.count": .stringConvertible(dropped)])
        }
    }

    /// What is owed to the folders this node's row names, oldest broadcast first (``batch`` at a time).
    private func owed() async throws(FleetError) -> [(ChannelStore.Broadcast, String)] {
        let query: PostgresQuery = """
            SELECT f.folder, b.id, b.request_id, b.unique_id, b.priority, b.expiration, b.collapse_id, b.payload,
                b.received_at, c.id, c.bundle_id, c.environment, c.storage_policy, c.created_at
            FROM nse_fleet_nodes n
            CROSS JOIN LATERAL jsonb_array_elements_text(\(unescaped: Self.served("n"))) AS served(folder)
            JOIN nse_fleet_broadcast_folders f ON f.folder = served.folder
            JOIN nse_fleet_broadcasts b ON b.id = f.broadcast_id
            JOIN nse_fleet_channels c ON c.id = b.channel_id
            WHERE n.name = \(node) AND n.taken_by IS NULL
            ORDER BY b.id, f.folder LIMIT \(unescaped: String(Self.batch))
            """
        return try await connection.attempt("broadcasts not read") {
            var owed: [(ChannelStore.Broadcast, String)] = []
            let rows = try await connection.client.query(query, logger: connection.logger)
            for try await (
                folder, id, requestID, uniqueID, priority, expiration, collapseID, payload, received, channelID,
                bundleID, environment, policy, created
            ) in rows.decode(
                (
                    String, Int64, String, String, Int, Int64?, String?, ByteBuffer, Int64, String, String, String, Int,
                    Int64
                ).self)
            {
                let channel = BroadcastChannel(
                    id: channelID, bundleID: bundleID, environment: environment,
                    storagePolicy: BroadcastChannel.StoragePolicy(rawValue: Int64(policy)) ?? .noStorage,
                    createdAt: created)
                let broadcast = ChannelStore.Broadcast(
                    id: id, channel: channel, requestID: requestID, uniqueID: uniqueID, priority: priority,
                    expiration: expiration, collapseID: collapseID, payload: Array(payload.readableBytesView),
                    receivedAt: received)
                owed.append((broadcast, folder))
            }
            return owed
        }
    }

    /// `folder` has had the broadcast, if this node still serves it; the broadcast goes with its last folder. The
    /// broadcast's row is locked first, so that two nodes finishing its last two folders at once do not each see
    /// the other's still there.
    private func done(_ id: Int64, folder: String) async throws(FleetError) {
        try await connection.attempt("broadcast not marked handed out") {
            try await connection.transaction { transaction in
                try await transaction.query(
                    "SELECT id FROM nse_fleet_broadcasts WHERE id = \(id) FOR UPDATE", logger: connection.logger)
                try await transaction.query(
                    """
                    DELETE FROM nse_fleet_broadcast_folders f WHERE f.broadcast_id = \(id) AND f.folder = \(folder)
                    AND EXISTS (
                        SELECT 1 FROM nse_fleet_nodes n
                        WHERE n.name = \(node) AND n.taken_by IS NULL
                        AND (\(unescaped: Self.served("n"))) ? \(folder))
                    """, logger: connection.logger)
                try await transaction.query(
                    """
                    DELETE FROM nse_fleet_broadcasts b WHERE b.id = \(id)
                    AND NOT EXISTS (SELECT 1 FROM nse_fleet_broadcast_folders f WHERE f.broadcast_id = \(id))
                    """, logger: connection.logger)
            }
        }
    }
}
