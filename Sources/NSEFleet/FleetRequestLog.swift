import Logging
import NSEAPNsServer
import NSEJSON
import PostgresNIO

/// The fleet's request log: one row per `POST /3/device` any node took, the entry's JSON as ``RequestLog`` makes
/// it. Ids come from one sequence, so `since` means the same on every node.
struct FleetRequestLog: Sendable {
    let connection: FleetConnection

    func record(_ entry: RequestLog.Entry, node: String) async throws(FleetError) {
        var object = entry.json.objectValue ?? JSONObject()
        object["id"] = nil
        let text = JSON.object(object).serialized()
        let uniqueID = entry.uniqueID?.lowercased()
        try await connection.attempt("request not logged") {
            try await connection.client.query(
                """
                INSERT INTO nse_fleet_requests (node, received_at, token, topic, unique_id, entry)
                VALUES (\(node), \(entry.receivedAt), \(entry.token), \(entry.topic), \(uniqueID), \(text))
                """, logger: connection.logger)
        }
    }

    /// Newest first: each entry's JSON with its fleet-wide `id` first and the `node` that took it last.
    func entries(token: String?, topic: String?, uniqueID: String?, since: Int, limit: Int) async throws(FleetError)
        -> [JSON]
    {
        let token = token?.lowercased()
        let uniqueID = uniqueID?.lowercased()
        return try await connection.attempt("request log not read") {
            var found: [JSON] = []
            let rows = try await connection.client.query(
                """
                SELECT id, node, entry FROM nse_fleet_requests
                WHERE id > \(Int64(since)) AND (\(token)::text IS NULL OR token = \(token))
                    AND (\(topic)::text IS NULL OR topic = \(topic))
                    AND (\(uniqueID)::text IS NULL OR unique_id = \(uniqueID))
                ORDER BY id DESC LIMIT \(Int64(min(limit, Int(Int32.max))))
                """, logger: connection.logger)
            for try await (id, node, entry) in rows.decode((Int64, String, String).self) {
                let stored = (try? JSON.parse(entry))?.objectValue ?? JSONObject()
                found.append(.object(JSONObject([("id", .int(id))] + stored.members + [("node", .string(node))])))
            }
            return found
        }
    }

    func clear() async throws(FleetError) {
        try await connection.attempt("request log not cleared") {
            try await connection.client.query("DELETE FROM nse_fleet_requests", logger: connection.logger)
        }
    }
}
