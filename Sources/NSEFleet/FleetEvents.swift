import Logging
import NSEJSON
import PostgresNIO
import Synchronization

/// The fleet's results as they are copied, told to every other node through LISTEN/NOTIFY, so `GET /v1/events` on
/// any node streams the fleet's results. A copy's INSERT notifies for each row it adds (a copy already there adds
/// none: no event twice); a node skips its own (its hub had them first) and reads the others' rows by key. One
/// pooled connection listens for as long as the node serves; what is notified while it reconnects is not replayed.
final class FleetEvents: Sendable {
    /// The NOTIFY channel.
    static let channel = "nse_fleet_results"

    private let connection: FleetConnection
    private let node: String
    /// Where another node's result goes: the node's event hub, with the device's tokens; and whether anyone
    /// follows it now (a result nobody would see is not read).
    private let sink = Mutex<(wanted: @Sendable () -> Bool, publish: @Sendable (JSON, [String]) -> Void)?>(nil)

    init(connection: FleetConnection, node: String) {
        self.connection = connection
        self.node = node
    }

    func follow(wanted: @escaping @Sendable () -> Bool, _ publish: @escaping @Sendable (JSON, [String]) -> Void) {
        sink.withLock { $0 = (wanted, publish) }
    }

    /// Listens until cancelled; a lost connection is listened on again a second later.
    func listen() async {
        while !Task.isCancelled {
            do {
                try await connection.client.withConnection { listening in
                    try await listening.listen(on: Self.channel) { notifications in
                        for try await notification in notifications { await tell(notification.payload) }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                connection.logger.warning(
                    "fleet events not followed: listening again",
                    metadata: ["fleet.error": .string(FleetConnection.describe(error))])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// One notification: `{"node": …, "device": …, "row": …}`; another node's result is read and published.
    private func tell(_ payload: String) async {
        guard let (wanted, publish) = sink.withLock({ $0 }), wanted(), let note = try? JSON.parse(payload),
            let from = note["node"]?.stringValue, from != node, let device = note["device"]?.stringValue,
            let row = note["row"]?.intValue
        else { return }
        do {
            let rows = try await connection.client.query(
                """
                SELECT r.result, ARRAY(SELECT d.token FROM nse_fleet_devices d WHERE d.device = r.device)
                FROM nse_fleet_results r WHERE r.device = \(device) AND r.row_id = \(row)
                """, logger: connection.logger)
            for try await (text, tokens) in rows.decode((String, [String]).self) {
                guard let result = try? JSON.parse(text) else { continue }
                publish(result, tokens)
            }
        } catch {
            connection.logger.warning(
                "fleet event not read", metadata: ["fleet.error": .string(FleetConnection.describe(error))])
        }
    }
}
