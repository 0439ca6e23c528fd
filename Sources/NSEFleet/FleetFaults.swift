import Logging
import NSEAPNsServer
import NSEJSON
import NSESystem
import PostgresNIO

/// The fleet's push fault rules and its unavailable switch. Each push asks once (``take(token:)``): one statement
/// reads the switch and, if the fleet is available, takes one use of the oldest rule for the token with its row
/// locked (`FOR UPDATE`), so a rule of `count` 3 answers exactly three pushes whichever nodes they reach. Not
/// `SKIP LOCKED`: a push that skipped a rule another node holds would find none, and a count would answer fewer.
struct FleetFaults: Sendable {
    let connection: FleetConnection

    func add(_ rules: [FaultRule]) async throws(FleetError) -> [JSON] {
        try await connection.attempt("fault rules not added") {
            try await connection.client.withTransaction(logger: connection.logger) { transaction in
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

    /// `{"unavailable": …, "rules": […]}`, rules oldest first, as ``APNsFaultPlan/json`` lists a node's.
    func json() async throws(FleetError) -> JSON {
        try await connection.attempt("fault rules not read") {
            var unavailable: String?
            for try await reason in try await connection.client.query(
                "SELECT unavailable FROM nse_fleet_switches WHERE id = 1", logger: connection.logger
            ).decode(String?.self) {
                unavailable = reason
            }
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

    /// The switch, else one use of the first rule for `token`, in one round trip.
    func take(token: String) async throws(FleetError) -> FleetFaultDecision {
        let token = token.lowercased()
        let row = try await connection.attempt("fault rules not read") {
            let rows = try await connection.client.query(
                """
                WITH switch AS (SELECT unavailable FROM nse_fleet_switches WHERE id = 1),
                chosen AS (
                    SELECT id FROM nse_fleet_faults
                    WHERE remaining > 0 AND (token IS NULL OR token = \(token))
                        AND (SELECT unavailable FROM switch) IS NULL
                    ORDER BY id LIMIT 1 FOR UPDATE),
                taken AS (
                    UPDATE nse_fleet_faults f SET remaining = f.remaining - 1 FROM chosen WHERE f.id = chosen.id
                    RETURNING f.id, f.rule)
                SELECT (SELECT unavailable FROM switch), (SELECT id FROM taken), (SELECT rule FROM taken)
                """, logger: connection.logger)
            var found: (String?, Int64?, String?) = (nil, nil, nil)
            for try await row in rows.decode((String?, Int64?, String?).self) { found = row }
            return found
        }
        if let reason = row.0 { return .unavailable(reason) }
        guard let id = row.1, let text = row.2, let json = try? JSON.parse(text),
            let rule = try? FaultRule(json: json, now: SystemClock.unixMilliseconds())
        else { return .none }
        return .fault(id: Int(id), rule: rule)
    }

    /// A rule as `GET /v1/control/faults` lists it: its JSON with `id` and `remaining`.
    private static func entry(id: Int64, remaining: Int, rule: JSON) -> JSON {
        var object = rule.objectValue ?? JSONObject()
        object["id"] = .int(id)
        object["remaining"] = .int(Int64(remaining))
        return .object(object)
    }
}
