import Logging
import NSEAPNsServer
import NSEJSON
import NSESystem
import PostgresNIO

/// The fleet's nodes (`nse_fleet_nodes`): each writes its row when it listens (the address it takes forwarded pushes
/// on, the device folders it serves) and beats once a second (every third of a shorter lease). A node whose beat is
/// older than the lease has stopped: one live node takes over its devices (``take(_:now:)``: a conditional UPDATE,
/// so only one does), the one the stopped node's name hashes to among the live ones (rendezvous hashing, so several
/// stopped nodes spread over the rest), or any live node once the stopped one has waited three leases.
struct FleetNodes: Sendable {
    /// The device folders a node serves, absolute.
    struct Serves: Sendable, Equatable {
        var folders: [String]
        var devices: [String]

        var json: JSON { ["folders": .array(folders.map(JSON.string)), "devices": .array(devices.map(JSON.string))] }

        init(folders: [String], devices: [String]) {
            self.folders = folders
            self.devices = devices
        }

        init(parsing text: String) {
            let json = try? JSON.parse(text)
            folders = json?["folders"]?.arrayValue?.compactMap(\.stringValue) ?? []
            devices = json?["devices"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }

        mutating func merge(_ other: Serves) {
            folders += other.folders.filter { !folders.contains($0) }
            devices += other.devices.filter { !devices.contains($0) }
        }

        mutating func subtract(_ other: Serves) {
            folders.removeAll { other.folders.contains($0) }
            devices.removeAll { other.devices.contains($0) }
        }

        /// Whether it names any of `paths`.
        func names(any paths: Set<String>) -> Bool {
            folders.contains(where: paths.contains) || devices.contains(where: paths.contains)
        }
    }

    let connection: FleetConnection
    let node: String
    /// Milliseconds without a beat after which a node counts as stopped.
    let leaseMilliseconds: Int64

    /// Writes this node's row: where it takes forwarded pushes, what it serves, beating from now.
    func join(address: String, serves: Serves) async throws(FleetError) {
        let now = SystemClock.unixMilliseconds()
        try await connection.attempt("node not registered") {
            try await connection.client.query(
                """
                INSERT INTO nse_fleet_nodes (name, address, serves, started_at, heartbeat_at, taken_by)
                VALUES (\(node), \(address), \(serves.json.serialized()), \(now), \(now), NULL)
                ON CONFLICT (name) DO UPDATE SET address = EXCLUDED.address, serves = EXCLUDED.serves,
                    started_at = EXCLUDED.started_at, heartbeat_at = EXCLUDED.heartbeat_at, taken_by = NULL
                """, logger: connection.logger)
        }
    }

    /// What this node's earlier runs took over and still hold, by the rows marked taken by it: what a node restarted
    /// within its lease (nobody took it over meanwhile) serves again.
    func takenOver() async throws(FleetError) -> Serves {
        try await connection.attempt("nodes not read") {
            var held = Serves(folders: [], devices: [])
            for try await text in try await connection.client.query(
                "SELECT serves FROM nse_fleet_nodes WHERE taken_by = \(node) AND name <> \(node)",
                logger: connection.logger
            ).decode(String.self) {
                held.merge(Serves(parsing: text))
            }
            return held
        }
    }

    /// One beat, on the node's own connection (``FleetConnection/connectAlone(id:)``): a pool busy with pushes must
    /// not make a live node look stopped.
    func beat(on alone: PostgresConnection) async throws(FleetError) {
        let now = SystemClock.unixMilliseconds()
        try await connection.attempt("heartbeat not written") {
            try await alone.query(
                "UPDATE nse_fleet_nodes SET heartbeat_at = \(now) WHERE name = \(node)", logger: connection.logger)
        }
    }

    /// This node stops: its beat is set to zero, so another node takes its devices over at once; and a node it took
    /// but whose devices it had not yet moved (a takeover the stop or the database cut short) is given back, for
    /// another to take at once. (A takeover's move, ``moved(from:serves:)``, is refused once this is written.)
    func leave() async throws(FleetError) {
        try await connection.attempt("node not marked stopped") {
            try await connection.transaction { transaction in
                try await transaction.query(
                    "UPDATE nse_fleet_nodes SET heartbeat_at = 0 WHERE name = \(node)", logger: connection.logger)
                try await transaction.query(
                    """
                    UPDATE nse_fleet_nodes n SET taken_by = NULL
                    WHERE n.taken_by = \(node) AND n.name <> \(node) AND \(unescaped: Self.unmoved("n"))
                    """, logger: connection.logger)
            }
        }
    }

    /// Whether the devices of the node row `row` still name it (SQL): taken over, it was not moved.
    private static func unmoved(_ row: String) -> String {
        "EXISTS (SELECT 1 FROM nse_fleet_devices d WHERE d.node = \(row).name)"
    }

    /// The stopped nodes this node should take over now: those nobody took, and those taken by a node that stopped
    /// too before it moved their devices (its takeover cut short: else nobody would look at them again).
    func due(now: Int64) async throws(FleetError) -> [String] {
        let cutoff = now - leaseMilliseconds
        return try await connection.attempt("nodes not read") {
            var live: [String] = []
            var stopped: [(name: String, since: Int64, taken: String?, unmoved: Bool)] = []
            for try await (name, beat, taken, unmoved) in try await connection.client.query(
                "SELECT n.name, n.heartbeat_at, n.taken_by, \(unescaped: Self.unmoved("n")) FROM nse_fleet_nodes n",
                logger: connection.logger
            ).decode((String, Int64, String?, Bool).self) {
                if beat >= cutoff {
                    live.append(name)
                } else if name != node {
                    stopped.append((name, beat, taken, unmoved))
                }
            }
            stopped.removeAll { $0.taken != nil && (live.contains($0.taken ?? "") || !$0.unmoved) }
            guard live.contains(node) else { return [] }
            return stopped.filter { stopped in
                Self.choose(live, for: stopped.name) == node || stopped.since < now - 3 * leaseMilliseconds
            }.map(\.name)
        }
    }

    /// Marks `stopped` taken over by this node, if it still is stopped and nobody took it (or a node that stopped
    /// too before moving its devices did): its folders and who had taken it, else nil.
    func take(_ stopped: String, now: Int64) async throws(FleetError) -> (serves: Serves, before: String?)? {
        let cutoff = now - leaseMilliseconds
        return try await connection.attempt("node not taken over") {
            var taken: (serves: Serves, before: String?)?
            for try await (text, before) in try await connection.client.query(
                """
                WITH b AS (SELECT name, taken_by FROM nse_fleet_nodes WHERE name = \(stopped) FOR UPDATE)
                UPDATE nse_fleet_nodes n SET taken_by = \(node) FROM b
                WHERE n.name = b.name AND n.heartbeat_at < \(cutoff) AND (n.taken_by IS NULL OR (
                    \(unescaped: Self.unmoved("n")) AND NOT EXISTS (
                        SELECT 1 FROM nse_fleet_nodes t WHERE t.name = n.taken_by AND t.heartbeat_at >= \(cutoff))))
                RETURNING n.serves, b.taken_by
                """, logger: connection.logger
            ).decode((String, String?).self) {
                taken = (Serves(parsing: text), before)
            }
            return taken
        }
    }

    /// The takeover could not be done here (the folders are not reachable, or locked by a node still running):
    /// `stopped` goes back as it was, taken by `before` (a node that took it and looked stopped, but may still be
    /// moving it) or by nobody; another node, or this one later, may try again.
    func giveBack(_ stopped: String, to before: String?) async throws(FleetError) {
        try await connection.attempt("node not given back") {
            try await connection.client.query(
                "UPDATE nse_fleet_nodes SET taken_by = \(before) WHERE name = \(stopped) AND taken_by = \(node)",
                logger: connection.logger)
        }
    }

    /// The stopped node's devices are this node's now, and its folders part of what this node serves (so that the
    /// node taking this one over takes them too); the other nodes are told (``FleetOwners/channel``).
    func moved(from stopped: String, serves: Serves) async throws(FleetError) {
        try await connection.attempt("devices not moved") {
            try await connection.transaction { transaction in
                // Not once this node has left (``leave()``, which gave the stopped node back): its row, locked here
                // until the end, would name folders a node taking this one over may already have read without them.
                var left = false
                for try await beat in try await transaction.query(
                    "SELECT heartbeat_at FROM nse_fleet_nodes WHERE name = \(node) FOR UPDATE",
                    logger: connection.logger
                ).decode(Int64.self) {
                    left = beat == 0
                }
                guard !left else { throw FleetError("this node has left the fleet") }
                try await transaction.query(
                    "UPDATE nse_fleet_devices SET node = \(node) WHERE node = \(stopped)", logger: connection.logger)
                try await changeServes(in: transaction) { $0.merge(serves) }
                try await transaction.query(
                    "SELECT pg_notify(\(FleetOwners.channel), \(node))", logger: connection.logger)
            }
        }
    }

    /// Gives what this node took over of `owner`'s back to it as it starts again (docs/serve.md, "Coming back"), in
    /// one transaction: the devices' `tokens` name it, this node's row serves `serves` no more, and `owner`'s row
    /// serves them and counts as beating now, not taken over: if it never comes up, the node whose turn it is takes
    /// them over again after the lease. Every node is told.
    func handBack(tokens: [String], serves: Serves, to owner: String) async throws(FleetError) {
        let now = SystemClock.unixMilliseconds()
        try await connection.attempt("devices not given back") {
            try await connection.transaction { transaction in
                try await transaction.query(
                    "UPDATE nse_fleet_devices SET node = \(owner) WHERE node = \(node) AND token = ANY(\(tokens)::text[])",
                    logger: connection.logger)
                try await changeServes(in: transaction) { $0.subtract(serves) }
                // Its address stays the one it had (a node restarted on its port is reached at once); its join
                // writes the new one.
                try await transaction.query(
                    """
                    INSERT INTO nse_fleet_nodes (name, address, serves, started_at, heartbeat_at, taken_by)
                    VALUES (\(owner), '', \(serves.json.serialized()), \(now), \(now), NULL)
                    ON CONFLICT (name) DO UPDATE SET serves = EXCLUDED.serves, heartbeat_at = EXCLUDED.heartbeat_at,
                        taken_by = NULL
                    """, logger: connection.logger)
                try await transaction.query(
                    "SELECT pg_notify(\(FleetOwners.channel), \(node))", logger: connection.logger)
            }
        }
    }

    /// Rewrites what this node's row serves, in `transaction`, the row locked from its read to its write.
    private func changeServes(in transaction: PostgresConnection, _ change: (inout Serves) -> Void) async throws {
        var mine = Serves(folders: [], devices: [])
        for try await text in try await transaction.query(
            "SELECT serves FROM nse_fleet_nodes WHERE name = \(node) FOR UPDATE", logger: connection.logger
        ).decode(String.self) {
            mine = Serves(parsing: text)
        }
        change(&mine)
        try await transaction.query(
            "UPDATE nse_fleet_nodes SET serves = \(mine.json.serialized()) WHERE name = \(node)",
            logger: connection.logger)
    }

    /// The live nodes other than this one whose rows name any of `paths` (folders or device folders), with their
    /// address and what of `paths` each serves: where a node starting again asks for its folders back.
    func holders(of paths: Set<String>, on alone: PostgresConnection) async throws(FleetError)
        -> [(name: String, address: String, serves: Serves)]
    {
        let cutoff = SystemClock.unixMilliseconds() - leaseMilliseconds
        return try await connection.attempt("nodes not read") {
            var found: [(name: String, address: String, serves: Serves)] = []
            for try await (name, address, text, beat) in try await alone.query(
                "SELECT name, address, serves, heartbeat_at FROM nse_fleet_nodes ORDER BY name",
                logger: connection.logger
            ).decode((String, String, String, Int64).self) {
                let serves = Serves(parsing: text)
                guard name != node, beat >= cutoff, serves.names(any: paths) else { continue }
                found.append(
                    (
                        name, address,
                        Serves(
                            folders: serves.folders.filter(paths.contains),
                            devices: serves.devices.filter(paths.contains))
                    ))
            }
            return found
        }
    }

    /// The live node a stopped node's devices go to: the highest hash of the pair (rendezvous hashing).
    static func choose(_ live: [String], for stopped: String) -> String? {
        live.max { weight(stopped, $0) < weight(stopped, $1) }
    }

    /// FNV-1a over "stopped|node": stable across nodes and runs, as Swift's `Hasher` is not.
    static func weight(_ stopped: String, _ node: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (stopped + "|" + node).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
