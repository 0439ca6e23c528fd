public import Logging
public import NSEAPNsServer
public import NSEJSON

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A fleet of `nse serve` nodes on one PostgreSQL: this node's view of what they share (``FleetState``): the
/// request log (``FleetRequestLog``), push fault rules and the unavailable switch (``FleetFaults``), which node
/// serves which token (``FleetDevices``), every node's results (``FleetResults``) and their events (``FleetEvents``).
///
/// Made by ``open(url:node:maxConnections:logger:)``, which connects once and brings the schema up to date, so that
/// a database that cannot be used stops the node before it listens; then ``run()`` keeps the pool and the results
/// writer going until ``finish()``.
public final class PostgresFleet: FleetState {
    public let node: String
    public let connection: FleetConnection
    private let requestLog: FleetRequestLog
    private let faultRules: FleetFaults
    private let devices: FleetDevices
    private let resultCopies: FleetResults
    private let events: FleetEvents

    private init(connection: FleetConnection, node: String) {
        self.node = node
        self.connection = connection
        requestLog = FleetRequestLog(connection: connection)
        faultRules = FleetFaults(connection: connection)
        devices = FleetDevices(connection: connection)
        resultCopies = FleetResults(connection: connection, node: node)
        events = FleetEvents(connection: connection, node: node)
    }

    /// The name a node goes by unless told (`--node-name`): `HOST:PORT`, the machine's host name and the port it
    /// listens on (`HOST:pPID` for a port picked at start, 0).
    public static func defaultNodeName(port: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count - 1) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "localhost"
        return port == 0 ? "\(host):p\(getpid())" : "\(host):\(port)"
    }

    /// Connects to `url` and brings its schema up to date (concurrent nodes wait for each other).
    /// - Throws: one line naming the database (its password redacted) and what PostgreSQL said.
    public static func open(url: FleetDatabaseURL, node: String, maxConnections: Int, logger: Logger)
        async throws(FleetError) -> PostgresFleet
    {
        let connection = FleetConnection(url: url, maxConnections: maxConnections, logger: logger)
        let applied = try await connection.withFirstConnection { first in
            try await FleetSchema.migrate(first, logger: logger)
        }
        if !applied.isEmpty {
            logger.info(
                "fleet schema brought up to date",
                metadata: [
                    "fleet.database": .string(url.description),
                    "fleet.schema_versions": .string(applied.map(String.init).joined(separator: ",")),
                ])
        }
        return PostgresFleet(connection: connection, node: node)
    }

    /// Runs the connection pool and the results writer; returns once ``finish()`` was called and every queued
    /// result copy is written (or given up), the pool then closed.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.connection.run() }
            group.addTask { await self.events.listen() }
            await resultCopies.write()
            group.cancelAll()
        }
    }

    /// No more results to copy: ``run()`` writes what is queued, closes the pool and returns.
    public func finish() {
        resultCopies.finish()
    }

    /// Says which devices this node serves: `(remote token, voip token)` each.
    public func claim(_ devices: [(remote: String, voip: String)]) async throws(FleetError) {
        try await self.devices.claim(devices, node: node)
    }

    public func record(_ entry: RequestLog.Entry) async throws(FleetError) {
        try await requestLog.record(entry, node: node)
    }

    public func requests(token: String?, topic: String?, uniqueID: String?, since: Int, limit: Int)
        async throws(FleetError) -> [JSON]
    {
        try await requestLog.entries(token: token, topic: topic, uniqueID: uniqueID, since: since, limit: limit)
    }

    public func clearRequests() async throws(FleetError) {
        try await requestLog.clear()
    }

    public func addFaults(_ rules: [FaultRule]) async throws(FleetError) -> [JSON] {
        try await faultRules.add(rules)
    }

    public func removeFault(id: Int) async throws(FleetError) -> Bool {
        try await faultRules.remove(id: id)
    }

    public func clearFaults() async throws(FleetError) {
        try await faultRules.clear()
    }

    public func setUnavailable(_ reason: String?) async throws(FleetError) {
        try await faultRules.setUnavailable(reason)
    }

    public func faults() async throws(FleetError) -> JSON {
        try await faultRules.json()
    }

    public func takeFault(token: String) async throws(FleetError) -> FleetFaultDecision {
        try await faultRules.take(token: token)
    }

    public func copyResult(_ result: JSON, row: Int64, device: String, apnsID: String) {
        resultCopies.queue(
            .copy(
                FleetResults.Copy(
                    device: device.lowercased(), row: row, apnsID: apnsID,
                    recordedAt: result["recorded_at"]?.intValue ?? 0, result: result.serialized())))
    }

    public func follow(_ publish: @escaping @Sendable (_ result: JSON, _ tokens: [String]) -> Void) {
        events.follow(publish)
    }

    public func markUnacknowledged(row: Int64, device: String) {
        resultCopies.queue(.unacknowledged(device: device.lowercased(), row: row))
    }

    public func results(token: String, limit: Int, since: Int64, before: Int64) async throws(FleetError) -> [JSON]? {
        try await resultCopies.results(token: token, limit: limit, since: since, before: before)
    }
}
