import Logging
import NSEAPNsServer
import NSEJSON
import NSESystem
import PostgresNIO

/// The fleet's push fault rules and its unavailable switch. Each push asks once (``take(token:)``): one call of the
/// schema's `nse_fleet_take_faults` reads the switch and, if the fleet is available, takes one use of the oldest
/// rule for each token asking with its row locked (`FOR UPDATE`), so a rule of `count` 3 answers exactly three
/// pushes whichever nodes they reach. Not `SKIP LOCKED`: a push that skipped a rule another node holds would find
/// none, and a count would answer fewer. The pushes asking at once share the call (``GroupCommit``).
struct FleetFaults: Sendable {
    let connection: FleetConnection
    private let takes: GroupCommit<String, Taken>

    init(connection: FleetConnection) {
        self.connection = connection
        takes = GroupCommit(limit: 500) { tokens throws(FleetError) in
            try await Self.take(tokens, connection: connection)
        }
    }

    func add(_ rules: [FaultRule]) async throws(FleetError) -> [JSON] {
        try await connection.attempt("fault rules not added") {
            try await connection.transaction { transaction in
                try await transaction.query(
                    "DELETE FROM nse_fleet_faults WHERE remaining <= 0", logger: connection.logger)
                var added: [JSON] = []
                for rule in rules {
                    let text = rule.json.serialized()
                    let rows = try await transaction.query(
                        """
                        INSERT INTO nse_fleet_faults (token, remaining, rule)
                        VALUES (\(rule.token), \(rule.count), \(text)) RETURNING id
                        """, logger: connection.logger)
                    for try await id in rows.decode(Int64.self) {
                        added.append(Self.entry(id: id, remaining: rule.count, rule: rule.json))
                    }
                }
                return added
            }
        }
    }

    func remove(id: Int) async throws(FleetError) -> Bool {
        try await connection.attempt("fault rule not removed") {
            let rows = try await connection.client.query(
                "DELETE FROM nse_fleet_faults WHERE id = \(Int64(id)) AND remaining > 0 RETURNING id",
                logger: connection.logger)
            var removed = false
            for try await _ in rows.decode(Int64.self) { removed = true }
            return removed
        }
    }

    func clear() async throws(FleetError) {
        try await connection.attempt("fault rules not cleared") {
            try await connection.client.query("DELETE FROM nse_fleet_faults", logger: connection.logger)
        }
    }

    func setUnavailable(_ reason: String?) async throws(FleetError) {
        try await connection.attempt("unavailable switch not set") {
            try await connection.client.query(
                "UPDATE nse_fleet_switches SET unavailable = \(reason) WHERE id = 1", logger: connection.logger)
        }
    }

    /// The switch alone: the reason, nil when the fleet is available.
    func unavailable() async throws(FleetError) -> String? {
        try await connection.attempt("unavailable switch not read") {
            var unavailable: String?
            for try await reason in try await connection.client.query(
                "SELECT unavailable FROM nse_fleet_switches WHERE id = 1", logger: connection.logger
            ).decode(String?.self) {
                unavailable = reason
            }
            return unavailable
        }
    }

    /// `{"unavailable": …, "rules": […]}`, rules oldest first, as ``APNsFaultPlan/json`` lists a node's.
    func json() async throws(FleetError) -> JSON {
        let unavailable = try await unavailable()
        return try await connection.attempt("fault rules not read") {
            var rules: [JSON] = []
            let rows = try await connection.client.query(
                "SELECT id, remaining, rule FROM nse_fleet_faults WHERE remaining > 0 ORDER BY id",
                logger: connection.logger)
            for try await (id, remaining, rule) in rows.decode((Int64, Int32, String).self) {
                rules.append(Self.entry(id: id, remaining: Int(remaining), rule: (try? JSON.parse(rule)) ?? .null))
            }
            return ["unavailable": .string(unavailable), "rules": .array(rules)]
        }
    }

    /// The switch, else one use of the first rule for `token`: with the other pushes asking at the same time, in
    /// one round trip (``GroupCommit``).
    func take(token: String) async throws(FleetError) -> FleetFaultDecision {
        let row = try await takes.submit(token.lowercased())
        if let reason = row.unavailable { return .unavailable(reason) }
        guard let id = row.id, let text = row.rule, let json = try? JSON.parse(text),
            let rule = try? FaultRule(json: json, now: SystemClock.unixMilliseconds())
        else { return .none }
        return .fault(id: Int(id), rule: rule)
    }

    /// What the fleet said for one token.
    struct Taken: Sendable {
        var unavailable: String?
        var id: Int64?
        var rule: String?
    }

    /// One call of `nse_fleet_take_faults` for `tokens`: their answers in order.
    private static func take(_ tokens: [String], connection: FleetConnection) async throws(FleetError) -> [Taken] {
        try await connection.attempt("fault rules not read") {
            var taken = [Taken](repeating: Taken(), count: tokens.count)
            let rows = try await connection.client.query(
                "SELECT slot, unavailable, rule_id, rule FROM nse_fleet_take_faults(\(tokens)::text[])",
                logger: connection.logger)
            for try await (slot, unavailable, id, rule) in rows.decode((Int32, String?, Int64?, String?).self)
            where slot >= 1 && Int(slot) <= tokens.count {
                taken[Int(slot) - 1] = Taken(unavailable: unavailable, id: id, rule: rule)
            }
            return taken
        }
    }

    /// A rule as `GET /v1/control/faults` lists it: its JSON with `id` and `remaining`.
    private static func entry(id: Int64, remaining: Int, rule: JSON) -> JSON {
        var object = rule.objectValue ?? JSONObject()
        object["id"] = .int(id)
        object["remaining"] = .int(Int64(remaining))
        return .object(object)
    }
}
