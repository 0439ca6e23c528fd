import Logging
import NSEAPNsServer
import PostgresNIO

/// The fleet's tables, in versions applied once and in order. Every node brings the schema up to date when it
/// starts, in one transaction under an advisory lock: nodes started together wait for each other instead of
/// creating the same table twice, and a node never sees half a migration.
enum FleetSchema {
    /// `pg_advisory_xact_lock`'s key: "nse" and "fleet" in ASCII, so as not to meet another application's lock.
    static let lockKey: Int64 = 0x6E73_6566_6C65_6574

    /// Version N is `migrations[N - 1]`, one statement per string (PostgreSQL's extended protocol runs one at a
    /// time). Never edit a released version: add one.
    static let migrations: [[String]] = [
        [
            // The request log: every node's `POST /3/device`, the entry's JSON as `GET /v1/requests` answers it.
            """
            CREATE TABLE nse_fleet_requests (
                id BIGSERIAL PRIMARY KEY, node TEXT NOT NULL, received_at BIGINT NOT NULL, token TEXT NOT NULL,
                topic TEXT, unique_id TEXT, entry TEXT NOT NULL)
            """,
            "CREATE INDEX nse_fleet_requests_token ON nse_fleet_requests (token, id)",
            // Push fault rules, used up fleet-wide; a used-up rule stays at 0 until the next change sweeps it.
            """
            CREATE TABLE nse_fleet_faults (
                id BIGSERIAL PRIMARY KEY, token TEXT, remaining INTEGER NOT NULL, rule TEXT NOT NULL)
            """,
            "CREATE INDEX nse_fleet_faults_live ON nse_fleet_faults (id) WHERE remaining > 0",
            // The unavailable switch: one row.
            "CREATE TABLE nse_fleet_switches (id INTEGER PRIMARY KEY CHECK (id = 1), unavailable TEXT)",
            "INSERT INTO nse_fleet_switches (id, unavailable) VALUES (1, NULL)",
            // Which node serves which token (remote and voip): `device` is the device's remote token.
            """
            CREATE TABLE nse_fleet_devices (
                token TEXT PRIMARY KEY, device TEXT NOT NULL, node TEXT NOT NULL, seen_at BIGINT NOT NULL)
            """,
            // Every node's results, copied after the device's own store took them; `row_id` is that store's id.
            """
            CREATE TABLE nse_fleet_results (
                device TEXT NOT NULL, row_id BIGINT NOT NULL, apns_id TEXT NOT NULL, node TEXT NOT NULL,
                recorded_at BIGINT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (device, row_id))
            """,
            // Pushes whose 200 never reached the client (``Acknowledgements``): a table of their own, so the mark
            // and the result's copy may arrive in either order.
            "CREATE TABLE nse_fleet_unacknowledged (device TEXT NOT NULL, row_id BIGINT NOT NULL, PRIMARY KEY (device, row_id))",
        ],
        [
            // The nodes: where each takes forwarded pushes, the device folders it serves (JSON), its heartbeat, and
            // the node that took its devices over once it stopped beating.
            """
            CREATE TABLE nse_fleet_nodes (
                name TEXT PRIMARY KEY, address TEXT NOT NULL, serves TEXT NOT NULL, started_at BIGINT NOT NULL,
                heartbeat_at BIGINT NOT NULL, taken_by TEXT)
            """,
            // The secret a node puts on the pushes it forwards: written once by the first node (ON CONFLICT).
            "CREATE TABLE nse_fleet_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret TEXT NOT NULL)",
            "CREATE INDEX nse_fleet_devices_node ON nse_fleet_devices (node)",
        ],
        [
            // Several pushes' faults in one round trip (``FleetFaults``): the switch read once, then for each token
            // in order one use of the oldest live rule for it, its row locked, as one push's statement did.
            """
            CREATE FUNCTION nse_fleet_take_faults(tokens text[])
            RETURNS TABLE (slot integer, unavailable text, rule_id bigint, rule text)
            LANGUAGE plpgsql AS $$
            DECLARE
                reason text;
                chosen bigint;
                chosen_rule text;
            BEGIN
                SELECT s.unavailable INTO reason FROM nse_fleet_switches s WHERE s.id = 1;
                FOR i IN 1 .. coalesce(array_length(tokens, 1), 0) LOOP
                    chosen := NULL;
                    chosen_rule := NULL;
                    IF reason IS NULL THEN
                        SELECT f.id INTO chosen FROM nse_fleet_faults f
                        WHERE f.remaining > 0 AND (f.token IS NULL OR f.token = tokens[i])
                        ORDER BY f.id LIMIT 1 FOR UPDATE;
                        IF chosen IS NOT NULL THEN
                            UPDATE nse_fleet_faults f SET remaining = f.remaining - 1 WHERE f.id = chosen
                            RETURNING f.rule INTO chosen_rule;
                        END IF;
                    END IF;
                    slot := i;
                    unavailable := reason;
                    rule_id := chosen;
                    rule := chosen_rule;
                    RETURN NEXT;
                END LOOP;
            END
            $$
            """
        ],
        [
            // Broadcast channels (``FleetBroadcasts``): every node's, deleted ones kept as such.
            """
            CREATE TABLE nse_fleet_channels (
                id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, environment TEXT NOT NULL,
                storage_policy INTEGER NOT NULL, created_at BIGINT NOT NULL, deleted_at BIGINT)
            """,
            "CREATE INDEX nse_fleet_channels_app ON nse_fleet_channels (bundle_id, environment) WHERE deleted_at IS NULL",
            // Broadcasts from their 200 until every folder they are owed to has had them.
            """
            CREATE TABLE nse_fleet_broadcasts (
                id BIGSERIAL PRIMARY KEY, channel_id TEXT NOT NULL REFERENCES nse_fleet_channels (id),
                request_id TEXT NOT NULL, unique_id TEXT NOT NULL, priority INTEGER NOT NULL, expiration BIGINT,
                collapse_id TEXT, payload BYTEA NOT NULL, received_at BIGINT NOT NULL)
            """,
            // What each broadcast is still owed to: the device folders the fleet served when it came (a
            // `--devices` folder or a `--device`, as the nodes' rows name them), whichever node serves them now.
            """
            CREATE TABLE nse_fleet_broadcast_folders (
                broadcast_id BIGINT NOT NULL REFERENCES nse_fleet_broadcasts (id) ON DELETE CASCADE,
                folder TEXT NOT NULL, PRIMARY KEY (broadcast_id, folder))
            """,
            "CREATE INDEX nse_fleet_broadcast_folders_folder ON nse_fleet_broadcast_folders (folder)",
        ],
    ]

    /// Brings the database to the newest version; throws on one newer than this nse knows.
    /// - Returns: the versions applied now (empty: up to date already).
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS nse_fleet_schema (version INTEGER NOT NULL)", logger: logger)
            var current = 0
            for try await version in try await connection.query(
                "SELECT COALESCE(MAX(version), 0) FROM nse_fleet_schema", logger: logger
            ).decode(Int.self) {
                current = version
            }
            guard current <= migrations.count else {
                throw FleetSchemaError(
                    description:
                        "the fleet's schema is version \(current), newer than this nse knows (\(migrations.count))")
            }
            var applied: [Int] = []
            for version in (current + 1)..<(migrations.count + 1) {
                for statement in migrations[version - 1] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO nse_fleet_schema (version) VALUES (\(version))", logger: logger)
                applied.append(version)
            }
            return applied
        }
    }
}

extension FleetSchema {
    /// The fleet's secret: made by the first node that asks (two random UUIDs, 244 random bits), read by the rest.
    static func secret(_ connection: PostgresConnection, logger: Logger) async throws -> String {
        let made = PushService.newAPNsID() + PushService.newAPNsID()
        try await connection.query(
            "INSERT INTO nse_fleet_secret (id, secret) VALUES (1, \(made)) ON CONFLICT (id) DO NOTHING",
            logger: logger)
        for try await secret in try await connection.query("SELECT secret FROM nse_fleet_secret", logger: logger)
            .decode(String.self)
        {
            return secret
        }
        throw FleetSchemaError(description: "the fleet's secret is missing")
    }
}

/// The database holds a schema this nse cannot use.
struct FleetSchemaError: Error, CustomStringConvertible {
    var description: String
}
