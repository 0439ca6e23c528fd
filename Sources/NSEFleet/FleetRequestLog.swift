import Logging
import NSEAPNsServer
import NSEJSON
import PostgresNIO

/// The fleet's request log: one row per `POST /3/device` any node took, the entry's JSON as ``RequestLog`` makes
/// it. Ids come from one sequence, so `since` means the same on every node.
///
/// Written by group commit (``GroupCommit``): a push's entry is in the table before its answer goes out, and the
/// entries that come while one INSERT is out go together in the next (up to ``batch``).
final class FleetRequestLog: Sendable {
    /// At most this many entries per INSERT.
    static let batch = 500

    private struct Row: Sendable {
        var node: String
        var receivedAt: Int64
        var token: String
        var topic: String?
        var uniqueID: String?
        var text: String
    }

    private let connection: FleetConnection
    private let writer: GroupCommit<Row, Void>

    init(connection: FleetConnection) {
        self.connection = connection
        writer = GroupCommit(limit: Self.batch) { rows throws(FleetError) in
            try await Self.insert(rows, connection: connection)
            return rows.map { _ in () }
        }
    }

    func record(_ entry: RequestLog.Entry, node: String) async throws(FleetError) {
        var object = entry.json.objectValue ?? JSONObject()
        object["id"] = nil
        try await writer.submit(
            Row(
                node: node, receivedAt: entry.receivedAt, token: entry.token, topic: entry.topic,
                uniqueID: entry.uniqueID?.lowercased(), text: JSON.object(object).serialized()))
    }

    /// One INSERT, ids in the batch's order (an absent topic or unique id travels as "": arrays carry no NULL).
    private static func insert(_ batch: [Row], connection: FleetConnection) async throws(FleetError) {
        try await connection.attempt("request not logged") {
            try await connection.client.query(
                """
                INSERT INTO nse_fleet_requests (node, received_at, token, topic, unique_id, entry)
                SELECT node, received_at, token, NULLIF(topic, ''), NULLIF(unique_id, ''), entry
                FROM UNNEST(\(batch.map(\.node))::text[], \(batch.map(\.receivedAt))::bigint[],
                    \(batch.map(\.token))::text[], \(batch.map { $0.topic ?? "" })::text[],
                    \(batch.map { $0.uniqueID ?? "" })::text[], \(batch.map(\.text))::text[])
                    WITH ORDINALITY AS t(node, received_at, token, topic, unique_id, entry, position)
                ORDER BY position
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
