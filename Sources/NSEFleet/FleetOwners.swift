import Logging
import NSEAPNsServer
import PostgresNIO
import Synchronization

/// Which node serves which token, and where each node takes forwarded pushes, kept in memory: a push for another
/// node's device is forwarded without a round trip to the database. Read whole when the node joins and again
/// whenever a node claims devices or takes a stopped node's over (they NOTIFY ``channel``); a token not known yet
/// is looked up once.
final class FleetOwners: Sendable {
    /// The NOTIFY channel: devices changed hands.
    static let channel = "nse_fleet_owners"

    private struct State {
        /// Lowercase token to node.
        var tokens: [String: String] = [:]
        /// Node to address.
        var addresses: [String: String] = [:]
        /// Tokens no row names that a node said it holds (a Live Activity's): the node, and the device's remote token.
        var located: [String: (node: String, device: String)] = [:]
    }

    private let connection: FleetConnection
    private let node: String
    private let state = Mutex(State())

    init(connection: FleetConnection, node: String) {
        self.connection = connection
        self.node = node
    }

    /// The other node serving `token`; nil when this one does or none does.
    func owner(of token: String) async -> FleetPeer? {
        let token = token.lowercased()
        if let peer = state.withLock({ Self.peer(token, in: $0) }) { return peer.node == node ? nil : peer }
        // Not known yet (claimed since the last reading, or no node's): one lookup.
        do {
            let rows = try await connection.client.query(
                """
                SELECT d.node, n.address FROM nse_fleet_devices d JOIN nse_fleet_nodes n ON n.name = d.node
                WHERE d.token = \(token)
                """, logger: connection.logger)
            for try await (owner, address) in rows.decode((String, String).self) {
                state.withLock { state in
                    state.tokens[token] = owner
                    state.addresses[owner] = address
                }
                return owner == node ? nil : FleetPeer(node: owner, address: address)
            }
        } catch {
            connection.logger.warning(
                "device's node not looked up", metadata: ["fleet.error": .string(FleetConnection.describe(error))])
        }
        return nil
    }

    /// `token`, which no row names, is held by `device` on `peer` until the owners are read again (a Live
    /// Activity's token).
    func remember(_ token: String, device: String, servedBy peer: FleetPeer) {
        state.withLock { state in
            state.located[token.lowercased()] = (peer.node, device)
            state.addresses[peer.node] = peer.address
        }
    }

    /// What ``remember(_:device:servedBy:)`` kept for `token`.
    func located(_ token: String) -> (peer: FleetPeer, device: String)? {
        state.withLock { state in
            guard let (owner, device) = state.located[token.lowercased()], let address = state.addresses[owner] else {
                return nil
            }
            return (FleetPeer(node: owner, address: address), device)
        }
    }

    /// The other nodes that serve devices now, by name: a node without devices, or whose devices were taken over,
    /// is not among them.
    func peers() -> [FleetPeer] {
        state.withLock { state in
            Set(state.tokens.values).subtracting([node]).sorted().compactMap { name in
                state.addresses[name].map { FleetPeer(node: name, address: $0) }
            }
        }
    }

    private static func peer(_ token: String, in state: State) -> FleetPeer? {
        guard let owner = state.tokens[token], let address = state.addresses[owner] else { return nil }
        return FleetPeer(node: owner, address: address)
    }

    /// Reads every token's node and every node's address again.
    func reload() async {
        do {
            var fresh = State()
            for try await (name, address) in try await connection.client.query(
                "SELECT name, address FROM nse_fleet_nodes", logger: connection.logger
            ).decode((String, String).self) {
                fresh.addresses[name] = address
            }
            for try await (token, owner) in try await connection.client.query(
                "SELECT token, node FROM nse_fleet_devices", logger: connection.logger
            ).decode((String, String).self) {
                fresh.tokens[token] = owner
            }
            state.withLock { $0 = fresh }
        } catch {
            connection.logger.warning(
                "devices' nodes not read", metadata: ["fleet.error": .string(FleetConnection.describe(error))])
        }
    }

    /// Listens until cancelled, reading the owners again at each change (and once each time it starts listening,
    /// so a change missed while reconnecting is caught up).
    func listen() async {
        while !Task.isCancelled {
            do {
                try await connection.client.withConnection { listening in
                    try await listening.listen(on: Self.channel) { notifications in
                        await reload()
                        for try await _ in notifications { await reload() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                connection.logger.warning(
                    "device moves not followed: listening again",
                    metadata: ["fleet.error": .string(FleetConnection.describe(error))])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
