public import Logging
public import NSEAPNsServer
public import NSEJSON
import NSESystem
import PostgresNIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A fleet of `nse serve` nodes on one PostgreSQL: this node's view of what they share (``FleetState``): the
/// request log (``FleetRequestLog``), push fault rules and the unavailable switch (``FleetFaults``), which node
/// serves which token (``FleetDevices``, read by ``FleetOwners``; pushes for another node's devices go to it through
/// ``FleetForwarder``), the nodes and their heartbeats (``FleetNodes``: a stopped node's devices are taken over),
/// every node's results (``FleetResults``) and their events (``FleetEvents``), broadcast channels and broadcasts
/// (``FleetBroadcasts``).
///
/// Made by ``open(url:node:maxConnections:lease:logger:)``, which connects once and brings the schema up to date,
/// so that a database that cannot be used stops the node before it listens; then ``run()`` keeps the pool, the
/// heartbeat and the results writer going until ``finish()``.
public final class PostgresFleet: FleetState {
    public let node: String
    public let connection: FleetConnection
    private let requestLog: FleetRequestLog
    private let faultRules: FleetFaults
    private let devices: FleetDevices
    private let resultCopies: FleetResults
    private let events: FleetEvents
    private let broadcasts: FleetBroadcasts
    private let nodes: FleetNodes
    private let owners: FleetOwners
    private let forwarder: FleetForwarder
    /// The fleet's secret, on every push one node forwards to another.
    private let secret: String
    /// What this node does with a stopped node's folders (``adoptWith(_:)``).
    private let adopter = Mutex<(@Sendable (FleetNodes.Serves) async -> [(remote: String, voip: String)]?)?>(nil)
    /// The node's stop, for its loops (``finish()``).
    private let stop = FleetSignal()
    /// Whether stopped nodes are taken over here: not once the server stops accepting (``stopping()``).
    private let takingOver = Mutex(true)
    /// Stopped nodes this node failed to take over, and when it may try again (Unix milliseconds).
    private let retryAfter = Mutex<[String: Int64]>([:])

    /// How long a node may go without a beat before another takes its devices over (`--node-lease`).
    public let lease: Duration

    private init(connection: FleetConnection, node: String, secret: String, lease: Duration) {
        self.node = node
        self.connection = connection
        self.secret = secret
        self.lease = lease
        requestLog = FleetRequestLog(connection: connection)
        faultRules = FleetFaults(connection: connection)
        devices = FleetDevices(connection: connection)
        resultCopies = FleetResults(connection: connection, node: node)
        events = FleetEvents(connection: connection, node: node)
        broadcasts = FleetBroadcasts(connection: connection, node: node)
        nodes = FleetNodes(
            connection: connection, node: node,
            leaseMilliseconds: lease.components.seconds * 1000 + lease.components.attoseconds / 1_000_000_000_000_000)
        owners = FleetOwners(connection: connection, node: node)
        forwarder = FleetForwarder(secret: secret, node: node)
    }

    /// The default `--node-lease`.
    public static let defaultLease: Duration = .seconds(3)

    /// The name a node goes by unless told (`--node-name`): `HOST:PORT`, the machine's host name and the port it
    /// listens on (`HOST:pPID` for a port picked at start, 0).
    public static func defaultNodeName(port: Int) -> String {
        port == 0 ? "\(hostName):p\(getpid())" : "\(hostName):\(port)"
    }

    /// This machine's host name (`localhost` if it has none).
    public static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Connects to `url` and brings its schema up to date (concurrent nodes wait for each other).
    /// - Throws: one line naming the database (its password redacted) and what PostgreSQL said.
    public static func open(
        url: FleetDatabaseURL, node: String, maxConnections: Int, lease: Duration = defaultLease, logger: Logger
    ) async throws(FleetError) -> PostgresFleet {
        let connection = FleetConnection(url: url, maxConnections: maxConnections, logger: logger)
        let (applied, secret) = try await connection.withFirstConnection { first in
            let applied = try await FleetSchema.migrate(first, logger: logger)
            return (applied, try await FleetSchema.secret(first, logger: logger))
        }
        if !applied.isEmpty {
            logger.info(
                "fleet schema brought up to date",
                metadata: [
                    "fleet.database": .string(url.description),
                    "fleet.schema_versions": .string(applied.map(String.init).joined(separator: ",")),
                ])
        }
        return PostgresFleet(connection: connection, node: node, secret: secret, lease: lease)
    }

    /// Runs the connection pool and the results writer; returns once ``finish()`` was called and every queued
    /// result copy is written (or given up), the pool then closed.
    /// - Parameter releasing: lets the node's device locks go, called once the node is done with its devices and
    ///   before it marks itself stopped: a node taking them over at once would otherwise meet them still held (one
    ///   stop in three, its takeover then given back and tried again later).
    public func run(releasing: @escaping @Sendable () -> Void = {}) async {
        // Tasks of their own, not children, each step waited for a bounded time: a query postgres-nio never answers
        // (a database gone silent, or one sent on a connection that closed meanwhile) must not hold SIGTERM's exit.
        let pool = [
            Task { await connection.run() }, Task { await events.listen() }, Task { await owners.listen() },
        ]
        // What writes to the fleet ends before the pool closes, at its next turn after the stop: a takeover under way
        // is finished (else its rows are left half moved), and postgres-nio never answers a query on a connection
        // its pool closed (a stop during a takeover's move hung the node's exit for good).
        let writers = [
            Task { await beat() }, Task { await watch() }, Task { await broadcasts.run(until: stop) },
            Task { await resultCopies.write() },
        ]
        await stop.wait()
        if !(await Self.ended(writers, within: .seconds(2))) {
            connection.logger.warning("fleet's work not finished within 2 s of the stop: the database does not answer")
        }
        forwarder.close()
        releasing()
        // Stopped: whatever this node served is another's to take at once. Waited for one second at most.
        let leaving = Task { [nodes] in _ = try? await nodes.leave() }
        if !(await Self.ended([leaving], within: .seconds(1))) {
            connection.logger.warning("node not marked stopped: its devices are taken over after the lease")
        }
        for task in pool { task.cancel() }
        if !(await Self.ended(pool, within: .milliseconds(500))) {
            connection.logger.warning("fleet's database connections not closed: stopping all the same")
        }
    }

    /// Whether `tasks` all ended within `limit` (those that did not are left to the process's exit). Their end is a
    /// ``FleetSignal`` of its own, waited for with a nap: no polling.
    private static func ended(_ tasks: [Task<Void, Never>], within limit: Duration) async -> Bool {
        let ended = FleetSignal()
        let waiting = Task {
            for task in tasks { await task.value }
            ended.stop()
        }
        await ended.nap(upTo: limit)
        if !ended.isStopped { waiting.cancel() }
        return ended.isStopped
    }

    /// The server stops accepting (SIGTERM): no stopped node is taken over from now on (its devices would only be
    /// handed on again as this node leaves); what this node serves is served until it has drained.
    public func stopping() {
        takingOver.withLock { $0 = false }
    }

    /// No more results to copy: the heartbeat, the look for stopped nodes and the broadcasts end (a takeover under
    /// way is finished first), ``run()`` writes what is queued, marks the node stopped, closes the pool and returns.
    public func finish() {
        takingOver.withLock { $0 = false }
        stop.stop()
        broadcasts.wake()
        resultCopies.finish()
    }

    /// Says which devices this node serves: `(remote token, voip token)` each.
    public func claim(_ devices: [(remote: String, voip: String)]) async throws(FleetError) {
        try await self.devices.claim(devices, node: node)
    }

    /// Joins the fleet once listening: the node's row (`address`: the cleartext `host:port` the other nodes forward
    /// pushes to; `folders`, `devices`: what it serves, for a node taking it over), its devices claimed, every
    /// node told.
    ///
    /// A node restarted before anyone took it over serves again what its earlier run had taken over from stopped
    /// nodes (their rows still say it holds them, their devices' rows name it, and their locks went with the old
    /// process): else nobody would serve them and their pushes would be 400 `BadDeviceToken`.
    public func join(
        address: String, folders: [String], devices paths: [String], tokens: [(remote: String, voip: String)]
    ) async throws(FleetError) {
        var serves = FleetNodes.Serves(folders: folders, devices: paths)
        var tokens = tokens
        var held = try await nodes.takenOver()
        held.subtract(serves)
        if !held.folders.isEmpty || !held.devices.isEmpty, let adopt = adopter.withLock({ $0 }) {
            if let taken = await adopt(held) {
                serves.merge(held)
                tokens += taken
                connection.logger.notice(
                    "serving again what this node had taken over before it restarted",
                    metadata: ["device.count": .stringConvertible(taken.count)])
            } else {
                connection.logger.warning(
                    "what this node had taken over before it restarted is not served",
                    metadata: ["fleet.folders": .string((held.folders + held.devices).joined(separator: ", "))])
            }
        }
        try await nodes.join(address: address, serves: serves)
        broadcasts.start()
        try await devices.claim(tokens, node: node)
        await owners.reload()
    }

    /// What this node does with the folders of a node it takes over: `adopt` serves them here and returns their
    /// devices' tokens, or nil when it cannot (the takeover is then given back, and tried again).
    public func adoptWith(_ adopt: @escaping @Sendable ([String], [String]) async -> [(remote: String, voip: String)]?)
    {
        adopter.withLock { $0 = { serves in await adopt(serves.folders, serves.devices) } }
    }

    /// How often the node beats: once a second, or every third of the lease when that is shorter, so that a live node's
    /// beat is never as old as the lease (with a 1 s lease and a beat a second, a look just before a beat found a
    /// live node stopped, tried to take it over, met its locks and left it for 30 s).
    var beatInterval: Duration { min(.seconds(1), lease / 3) }

    /// Beats until cancelled, before ``run()`` beats: for a node asking for its devices back
    /// (``reclaim(folders:devices:)``), which waits for the giving node's running pushes and then starts, each of
    /// which may take longer than the lease. (A beat changes nothing while the node's row is taken over.)
    public func beatWhileStarting() -> Task<Void, Never> {
        Task { await beat() }
    }

    /// Beats while the node serves (``beatInterval``), or until cancelled.
    private func beat() async {
        var alone: PostgresConnection?
        while !Task.isCancelled, !stop.isStopped {
            do throws(FleetError) {
                let beating: PostgresConnection
                if let alone {
                    beating = alone
                } else {
                    beating = try await connection.connectAlone(id: 1)
                }
                alone = beating
                try await nodes.beat(on: beating)
            } catch {
                try? await alone?.close()
                alone = nil
                connection.logger.warning("fleet heartbeat", metadata: ["fleet.error": .string(error.description)])
            }
            await stop.nap(upTo: beatInterval)
        }
        try? await alone?.close()
    }

    /// Looks for stopped nodes four times a second and takes over those due here; apart from the beat, so a
    /// takeover that takes seconds (thousands of devices' databases read) never delays this node's own beat. (Once a
    /// second, a look added up to a second to the time a stopped node's pushes wait or get 503; a look is one
    /// small query.)
    private func watch() async {
        // Said once when looking starts failing, not four times a second (the heartbeat says it each second).
        var failing = false
        while !Task.isCancelled, !stop.isStopped {
            do throws(FleetError) {
                for stopped in try await nodes.due(now: SystemClock.unixMilliseconds()) where !stop.isStopped {
                    await takeOver(stopped)
                }
                failing = false
            } catch {
                if !failing {
                    connection.logger.warning(
                        "fleet's nodes not read", metadata: ["fleet.error": .string(error.description)])
                }
                failing = true
            }
            await stop.nap(upTo: .milliseconds(250))
        }
    }

    private func takeOver(_ stopped: String) async {
        guard let adopt = adopter.withLock({ $0 }), takingOver.withLock({ $0 }) else { return }
        let now = SystemClock.unixMilliseconds()
        // A takeover that failed here (folders not on this machine, still locked by a node that only missed its
        // beats) is tried again 5 s later, not at each look: the warning it logs would repeat four times a second.
        // (30 s before: a node refused while it was late, then killed, left its devices unserved that long.)
        guard (retryAfter.withLock { $0[stopped] } ?? 0) <= now else { return }
        do throws(FleetError) {
            guard let (serves, before) = try await nodes.take(stopped, now: now) else { return }
            // Stopping meanwhile: left for another node, at once.
            guard takingOver.withLock({ $0 }), let tokens = await adopt(serves) else {
                if takingOver.withLock({ $0 }) { retryAfter.withLock { $0[stopped] = now + 5_000 } }
                try await nodes.giveBack(stopped, to: before)
                return
            }
            retryAfter.withLock { $0[stopped] = nil }
            // Not written only when this node stops: its leave gives the stopped node back once its locks are gone.
            try await moved(from: stopped, serves: serves)
            connection.logger.notice(
                "took over a stopped node's devices",
                metadata: ["fleet.node": .string(stopped), "device.count": .stringConvertible(tokens.count)])
        } catch {
            connection.logger.error(
                "stopped node not taken over",
                metadata: ["fleet.node": .string(stopped), "fleet.error": .string(error.description)])
        }
    }

    /// Moves a stopped node's devices to this node once they are served here (their locks held): tried every second
    /// until written or this node stops (then its leave gives the stopped node back, and a node whose takeover was
    /// cut short without a leave is found by the others' look once its own lease is past).
    private func moved(from stopped: String, serves: FleetNodes.Serves) async throws(FleetError) {
        var said = false
        while true {
            do throws(FleetError) {
                return try await nodes.moved(from: stopped, serves: serves)
            } catch {
                guard !stop.isStopped else { throw error }
                if !said {
                    connection.logger.warning(
                        "stopped node's devices served here, not yet moved: trying again",
                        metadata: ["fleet.node": .string(stopped), "fleet.error": .string(error.description)])
                    said = true
                }
                await stop.nap(upTo: .seconds(1))
            }
        }
    }

    /// For each device (remote token), the last of its result rows the fleet has a copy of.
    public func copiedThrough(_ devices: [String]) async -> [String: Int64] {
        (try? await resultCopies.copiedThrough(devices)) ?? [:]
    }

    public func owner(of token: String) async -> FleetPeer? {
        await owners.owner(of: token)
    }

    public func peers() async -> [FleetPeer] {
        owners.peers()
    }

    public func remember(_ token: String, device: String, servedBy peer: FleetPeer) {
        owners.remember(token, device: device, servedBy: peer)
    }

    public func located(_ token: String) -> (peer: FleetPeer, device: String)? {
        owners.located(token)
    }

    public func forward(_ push: ForwardedPush, to peer: FleetPeer) async -> ForwardOutcome {
        await forwarder.send(push, to: peer)
    }

    public func forwardedIdentity(_ headers: APNsHeaders) -> ForwardedIdentity? {
        guard let given = headers.first(where: { $0.name == FleetHeaders.forwarded })?.value,
            Self.same(given, secret)
        else { return nil }
        return ForwardedIdentity(
            teamID: headers.first(where: { $0.name == FleetHeaders.team })?.value,
            certificateBundleID: headers.first(where: { $0.name == FleetHeaders.bundle })?.value)
    }

    public var takeoverWindow: Duration { lease + .seconds(3) }

    public func handBack(tokens: [String], folders: [String], devices paths: [String], to owner: String)
        async throws(FleetError)
    {
        try await nodes.handBack(tokens: tokens, serves: FleetNodes.Serves(folders: folders, devices: paths), to: owner)
        await owners.reload()
    }

    /// Asks the live nodes that took over any of `folders` and `devices` (absolute, links resolved) while this node
    /// was stopped to give them back (docs/serve.md, "Coming back"), before this node takes their locks. Each
    /// answers once its pushes of those devices have ended and their locks are released.
    /// - Returns: how many devices came back.
    /// - Throws: one line when no live node of the fleet serves them, or one would not give them back.
    public func reclaim(folders: [String], devices paths: [String]) async throws(FleetError) -> Int {
        let wanted = Set(folders + paths)
        let holders = try await connection.withFirstConnection { alone in
            try await nodes.holders(of: wanted, on: alone)
        }
        guard !holders.isEmpty else { throw FleetError("no live node of the fleet serves them") }
        var count = 0
        for holder in holders {
            let body: JSON = [
                "node": .string(node), "folders": .array(holder.serves.folders.map(JSON.string)),
                "devices": .array(holder.serves.devices.map(JSON.string)),
            ]
            let request = ForwardedPush(
                token: "", headers: [(name: "content-type", value: "application/json")],
                body: Array(body.serialized().utf8), identity: ForwardedIdentity(teamID: nil, certificateBundleID: nil),
                method: "POST", path: "/v1/fleet/handback")
            switch await forwarder.send(request, to: FleetPeer(node: holder.name, address: holder.address)) {
            case .answered(200, _, let answer):
                count += (try? JSON.parse(answer))?["devices"]?.intValue.map { Int($0) } ?? 0
            case .answered(let status, _, let answer):
                let detail = (try? JSON.parse(answer))?["detail"]?.stringValue ?? "status \(status)"
                throw FleetError("node \(holder.name) did not give them back: \(detail)")
            case .unreachable(let why), .lost(let why):
                throw FleetError("node \(holder.name) could not be asked to give them back: \(why)")
            }
        }
        return count
    }

    /// Compares without stopping at the first difference.
    private static func same(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
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

    public func follow(
        wanted: @escaping @Sendable () -> Bool,
        _ publish: @escaping @Sendable (_ result: JSON, _ tokens: [String]) -> Void
    ) {
        events.follow(wanted: wanted, publish)
    }

    public func markUnacknowledged(row: Int64, device: String) {
        resultCopies.queue(.unacknowledged(device: device.lowercased(), row: row))
    }

    public func results(token: String, limit: Int, since: Int64, before: Int64) async throws(FleetError) -> [JSON]? {
        try await resultCopies.results(token: token, limit: limit, since: since, before: before)
    }

    public func createChannel(_ channel: BroadcastChannel, limit: Int) async throws(FleetError) -> Bool {
        try await broadcasts.create(channel, limit: limit)
    }

    public func channel(_ id: String, bundleID: String, environment: String) async throws(FleetError)
        -> ChannelStore.Lookup
    {
        try await broadcasts.lookup(id, bundleID: bundleID, environment: environment)
    }

    public func channels(bundleID: String, environment: String) async throws(FleetError) -> [String] {
        try await broadcasts.channels(bundleID: bundleID, environment: environment)
    }

    public func deleteChannel(_ id: String, bundleID: String, environment: String, now: Int64)
        async throws(FleetError) -> Bool
    {
        try await broadcasts.delete(id, bundleID: bundleID, environment: environment, now: now)
    }

    public func acceptBroadcast(
        on channel: BroadcastChannel, requestID: String, uniqueID: String, priority: Int, expiration: Int64?,
        collapseID: String?, payload: [UInt8], now: Int64
    ) async throws(FleetError) -> ChannelStore.Broadcast {
        try await broadcasts.accept(
            on: channel, requestID: requestID, uniqueID: uniqueID, priority: priority, expiration: expiration,
            collapseID: collapseID, payload: payload, now: now)
    }

    public func handOutBroadcasts(_ handOut: @escaping @Sendable (ChannelStore.Broadcast, String) async -> Bool) {
        broadcasts.handOut(with: handOut)
    }

    public func unavailable() async throws(FleetError) -> String? {
        try await faultRules.unavailable()
    }
}
