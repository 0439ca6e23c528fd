import Logging
import NSEAPNsServer
import NSEJSON
import NSESystem
import PostgresNIO

/// Which node serves which device: each node writes the remote and voip tokens of the devices it serves when it
/// starts (the last to start with a token wins it). Any node then knows a token the fleet serves, and whose it is.
struct FleetDevices: Sendable {
    let connection: FleetConnection

    /// Claims `devices` (remote token, voip token) for `node`, in batches of 5,000 rows.
    func claim(_ devices: [(remote: String, voip: String)], node: String) async throws(FleetError) {
        let now = SystemClock.unixMilliseconds()
        var rows: [(token: String, device: String)] = []
        for device in devices {
            let remote = device.remote.lowercased()
            rows.append((remote, remote))
            if !device.voip.isEmpty { rows.append((device.voip.lowercased(), remote)) }
        }
        for start in stride(from: 0, to: rows.count, by: 5_000) {
            let slice = rows[start..<min(rows.count, start + 5_000)]
            try await connection.attempt("devices not registered") {
                try await connection.client.query(
                    """
                    INSERT INTO nse_fleet_devices (token, device, node, seen_at)
                    SELECT token, device, \(node), \(now)
                    FROM UNNEST(\(slice.map(\.token))::text[], \(slice.map(\.device))::text[]) AS t(token, device)
                    ON CONFLICT (token) DO UPDATE SET device = EXCLUDED.device, node = EXCLUDED.node,
                        seen_at = EXCLUDED.seen_at
                    """, logger: connection.logger)
            }
        }
        // The other nodes read who serves what again (``FleetOwners``).
        try await connection.attempt("device claim not told") {
            try await connection.client.query(
                "SELECT pg_notify(\(FleetOwners.channel), \(node))", logger: connection.logger)
        }
    }
}
