import Logging
import NSEAPNsServer
import NSEJSON
import PostgresNIO
import Synchronization

/// Every node's results, for any node to read: each is copied here after the device's own `results.db` took it
/// (which is what its 200 stood for). Copies are queued and written by one writer in batches, in order, off the
/// push's thread; a node that dies loses the copies still queued, never a result (docs/serve.md).
final class FleetResults: Sendable {
    struct Copy: Sendable {
        var device: String
        var row: Int64
        var apnsID: String
        var recordedAt: Int64
        var result: String
    }

    /// What the writer has to write, in the order it came.
    enum Pending: Sendable {
        case copy(Copy)
        /// The push's 200 never reached its client: its result reads `"acknowledged": false`.
        case unacknowledged(device: String, row: Int64)
    }

    /// At most this many copies per INSERT.
    static let batch = 500

    private let connection: FleetConnection
    private let node: String
    private let pending = Mutex<[Pending]>([])
    private let wake: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation

    init(connection: FleetConnection, node: String) {
        self.connection = connection
        self.node = node
        (wake, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func queue(_ item: Pending) {
        pending.withLock { $0.append(item) }
        wakeUp.yield()
    }

    /// No more copies: the writer writes what is queued and returns.
    func finish() {
        wakeUp.finish()
    }

    /// Writes copies as they come, until ``finish()`` and the queue is empty.
    func write() async {
        for await _ in wake { await flush() }
        await flush()
    }

    private func flush() async {
        while true {
            let items = pending.withLock { pending -> [Pending] in
                let taken = Array(pending.prefix(Self.batch))
                pending.removeFirst(taken.count)
                return taken
            }
            guard !items.isEmpty else { return }
            var copies: [Copy] = []
            var marks: [(device: String, row: Int64)] = []
            for item in items {
                switch item {
                case .copy(let copy): copies.append(copy)
                case .unacknowledged(let device, let row): marks.append((device, row))
                }
            }
            if !copies.isEmpty {
                await write("results not copied to the fleet", count: copies.count) { try await insert(copies) }
            }
            if !marks.isEmpty {
                await write("unacknowledged pushes not marked in the fleet", count: marks.count) {
                    try await mark(marks)
                }
            }
        }
    }

    /// Tries `body` three times (0.1 s, then 0.5 s apart), then gives up with an error line.
    private func write(_ failure: Logger.Message, count: Int, _ body: () async throws -> Void) async {
        for pause in [100, 500, 0] {
            do {
                return try await body()
            } catch {
                guard pause > 0 else {
                    connection.logger.error(
                        failure,
                        metadata: [
                            "fleet.rows": .stringConvertible(count),
                            "fleet.error": .string(FleetConnection.describe(error)),
                        ])
                    return
                }
                try? await Task.sleep(for: .milliseconds(pause))
            }
        }
    }

    private func mark(_ marks: [(device: String, row: Int64)]) async throws {
        try await connection.client.query(
            """
            INSERT INTO nse_fleet_unacknowledged (device, row_id)
            SELECT * FROM UNNEST(\(marks.map(\.device))::text[], \(marks.map(\.row))::bigint[])
            ON CONFLICT DO NOTHING
            """, logger: connection.logger)
    }

    /// One INSERT of a batch of copies; a copy already there (the same device and row) is left as it is. Each row
    /// added is notified on ``FleetEvents/channel``, at commit.
    private func insert(_ copies: [Copy]) async throws {
        try await connection.client.query(
            """
            WITH added AS (
                INSERT INTO nse_fleet_results (device, row_id, apns_id, node, recorded_at, result)
                SELECT device, row_id, apns_id, \(node), recorded_at, result
                FROM UNNEST(\(copies.map(\.device))::text[], \(copies.map(\.row))::bigint[],
                    \(copies.map(\.apnsID))::text[], \(copies.map(\.recordedAt))::bigint[],
                    \(copies.map(\.result))::text[]) AS t(device, row_id, apns_id, recorded_at, result)
                ON CONFLICT (device, row_id) DO NOTHING
                RETURNING device, row_id)
            SELECT pg_notify(\(FleetEvents.channel), json_build_object('node', \(node), 'device', device, 'row', row_id)::text)
            FROM added
            """, logger: connection.logger)
    }

    /// For each device (remote token), the last of its rows copied.
    func copiedThrough(_ devices: [String]) async throws(FleetError) -> [String: Int64] {
        try await connection.attempt("copies not counted") {
            var through: [String: Int64] = [:]
            for try await (device, row) in try await connection.client.query(
                """
                SELECT device, MAX(row_id) FROM nse_fleet_results WHERE device = ANY(\(devices)::text[])
                GROUP BY device
                """, logger: connection.logger
            ).decode((String, Int64).self) {
                through[device] = row
            }
            return through
        }
    }

    /// A device's copies, newest first, as the device's own store reads them (`id` is its row there); nil when no
    /// node serves `token`.
    func results(token: String, limit: Int, since: Int64, before: Int64) async throws(FleetError) -> [JSON]? {
        let token = token.lowercased()
        return try await connection.attempt("results not read") {
            var device: String?
            for try await found in try await connection.client.query(
                "SELECT device FROM nse_fleet_devices WHERE token = \(token)", logger: connection.logger
            ).decode(String.self) {
                device = found
            }
            guard let device else { return nil }
            var found: [JSON] = []
            let rows = try await connection.client.query(
                """
                SELECT r.row_id, r.result, u.row_id IS NULL FROM nse_fleet_results r
                LEFT JOIN nse_fleet_unacknowledged u ON u.device = r.device AND u.row_id = r.row_id
                WHERE r.device = \(device) AND r.row_id > \(since) AND r.row_id < \(before)
                ORDER BY r.row_id DESC LIMIT \(Int64(limit))
                """, logger: connection.logger)
            for try await (row, text, acknowledged) in rows.decode((Int64, String, Bool).self) {
                guard var object = (try? JSON.parse(text))?.objectValue else { continue }
                object["id"] = .int(row)
                object["acknowledged"] = .bool(acknowledged)
                found.append(.object(object))
            }
            return found
        }
    }
}
