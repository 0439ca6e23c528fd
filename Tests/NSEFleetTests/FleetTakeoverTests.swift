import Foundation
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A takeover is finished whole, whatever meets it: a database refusing the move, or the taker's own stop
/// (docs/serve.md, "A fleet on PostgreSQL").
@Suite(.serialized)
struct FleetTakeoverTests {
    /// A and B on a new cluster (1 s lease), `first` run, every change of a device's row made to fail (`RAISE`) or
    /// wait (`pg_sleep`) by a trigger (`nse_test_hold`, until dropped), then B killed: A is about to take it over.
    static func killB(holding body: String, first: String? = nil) throws -> (
        cluster: PostgresCluster, nodeA: ServeNode, folderB: String, tokenB: String
    ) {
        let cluster = try PostgresCluster()
        let (folderA, _) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: ["--node-lease", "1"])
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: ["--node-lease", "1"])
        if let first { _ = try cluster.psql(first) }
        _ = try cluster.psql(
            "CREATE FUNCTION nse_test_hold() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN \(body); RETURN NEW; END'")
        _ = try cluster.psql(
            "CREATE TRIGGER nse_test_hold BEFORE UPDATE ON nse_fleet_devices FOR EACH ROW "
                + "EXECUTE FUNCTION nse_test_hold()")
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
        return (cluster, nodeA, folderB, tokenB)
    }

    /// Whether a move of devices' rows is under way (held by the trigger): "1".
    static func moving(_ cluster: PostgresCluster) throws -> String {
        try cluster.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                + "AND query LIKE 'UPDATE nse_fleet_devices SET node%'")
    }

    @Test(
        "a takeover whose move of the devices' rows fails is tried again until it is written",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func takeoverMoveIsTriedAgain() throws {
        let (cluster, nodeA, _, tokenB) = try Self.killB(holding: "RAISE EXCEPTION ''refused for the test''")
        defer { nodeA.stop() }
        let said = try FleetTests.eventually(
            { nodeA.log }, until: { $0.contains("not yet moved: trying again") }, seconds: 15)
        #expect(said.contains("not yet moved: trying again"), "\(said)")
        _ = try cluster.psql("DROP TRIGGER nse_test_hold ON nse_fleet_devices")
        let owner = { try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") }
        #expect(try FleetTests.eventually(owner, until: { $0 == "A" }, seconds: 15) == "A", "\(nodeA.log)")
        #expect(nodeA.log.contains("took over a stopped node's devices"))
        #expect(try Exchange.push(nodeA, token: tokenB).status == 200)
    }

    @Test(
        "a node stopped while it moves a takeover's rows writes them, then exits 0 within 5 s",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func stopDuringTakeoverFinishesIt() throws {
        // The move takes a second a row (a remote and a VoIP token): A's stop comes while it is under way.
        let (cluster, nodeA, folderB, tokenB) = try Self.killB(holding: "PERFORM pg_sleep(1)")
        defer { nodeA.stop() }
        let moving = try FleetTests.eventually({ try Self.moving(cluster) }, until: { $0 == "1" }, seconds: 15)
        #expect(moving == "1", "\(nodeA.log)")
        let stopped = nodeA.stop()
        #expect(stopped.status == 0 && stopped.seconds < 5, "\(stopped) \(nodeA.log)")
        // Written whole: B's device names A, whose row serves B's folder and is marked stopped, for the next node.
        #expect(try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") == "A")
        let row = try cluster.psql("SELECT serves, heartbeat_at FROM nse_fleet_nodes WHERE name = 'A'")
        #expect(row.contains(folderB) && row.hasSuffix("|0"), "\(row)")
        #expect(nodeA.log.contains("took over a stopped node's devices"), "\(nodeA.log)")
    }

    @Test(
        "a takeover cut short is taken up by another node, whether its taker stopped or was killed",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)),
        arguments: [SIGTERM, SIGKILL])
    func cutShortTakeoverIsTakenUp(signal: Int32) throws {
        let (cluster, nodeA, _, tokenB) = try Self.killB(holding: "RAISE EXCEPTION ''refused for the test''")
        defer { nodeA.stop() }
        let said = try FleetTests.eventually(
            { nodeA.log }, until: { $0.contains("not yet moved: trying again") }, seconds: 15)
        #expect(said.contains("not yet moved: trying again"), "\(said)")
        let takenBy = { try cluster.psql("SELECT COALESCE(taken_by, '-') FROM nse_fleet_nodes WHERE name = 'B'") }
        #expect(try takenBy() == "A")
        if signal == SIGTERM {
            // Its leave gives B back, its locks gone first.
            let stopped = nodeA.stop()
            #expect(stopped.status == 0 && stopped.seconds < 5, "\(stopped) \(nodeA.log)")
            #expect(try takenBy() == "-", "\(nodeA.log)")
        } else {
            // B's row still says A took it; A's lease passes, and B's devices still name B (before: B was nobody's).
            kill(nodeA.process.processIdentifier, SIGKILL)
            nodeA.process.waitUntilExit()
        }
        _ = try cluster.psql("DROP TRIGGER nse_test_hold ON nse_fleet_devices")
        let (folderC, _) = try FleetTests.device()
        let nodeC = try ServeNode(name: "C", device: folderC, database: cluster.url, extra: ["--node-lease", "1"])
        defer { nodeC.stop() }
        let owner = { try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") }
        #expect(try FleetTests.eventually(owner, until: { $0 == "C" }, seconds: 15) == "C", "\(nodeC.log)")
        #expect(try Exchange.push(nodeC, token: tokenB).status == 200)
    }

    @Test(
        "a node that took another and only looks stopped keeps it when a third cannot take it",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func refusedTakeoverGoesBackToItsTaker() throws {
        // A's move of B's rows is under way (a trigger: three seconds a row) when A freezes (SIGSTOP): its beat
        // stops, so B, taken by A and not yet moved, looks due to C; but A still holds B's locks. (A's own row is
        // marked taken by C beforehand, so that C does not wait on it: A's move holds it locked.)
        let (cluster, nodeA, folderB, tokenB) = try Self.killB(
            holding: "PERFORM pg_sleep(3)", first: "UPDATE nse_fleet_nodes SET taken_by = 'C' WHERE name = 'A'")
        defer { nodeA.stop() }
        let moving = try FleetTests.eventually({ try Self.moving(cluster) }, until: { $0 == "1" }, seconds: 15)
        #expect(moving == "1", "\(nodeA.log)")
        kill(nodeA.process.processIdentifier, SIGSTOP)
        let (folderC, _) = try FleetTests.device()
        let nodeC = try ServeNode(name: "C", device: folderC, database: cluster.url, extra: ["--node-lease", "1"])
        defer { nodeC.stop() }
        let refused = try FleetTests.eventually(
            { nodeC.log }, until: { $0.contains("device \(folderB) is served by another nse serve") }, seconds: 15)
        #expect(refused.contains("device \(folderB) is served by another nse serve"), "\(refused)")
        usleep(300_000)
        // Given back to A, not to nobody (before: nobody, and C tried again and again while A moved them).
        #expect(try cluster.psql("SELECT COALESCE(taken_by, '-') FROM nse_fleet_nodes WHERE name = 'B'") == "A")
        kill(nodeA.process.processIdentifier, SIGCONT)
        _ = try cluster.psql("DROP TRIGGER nse_test_hold ON nse_fleet_devices")
        let owner = { try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") }
        #expect(try FleetTests.eventually(owner, until: { $0 == "A" }, seconds: 15) == "A", "\(nodeA.log)")
        #expect(try cluster.psql("SELECT COALESCE(taken_by, '-') FROM nse_fleet_nodes WHERE name = 'B'") == "A")
    }
}
