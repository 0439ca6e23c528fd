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
    /// A trigger making every change of a device's row fail (`RAISE`) or wait (`pg_sleep`), until dropped.
    static func hold(_ cluster: PostgresCluster, _ body: String) throws {
        _ = try cluster.psql(
            "CREATE FUNCTION nse_test_hold() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN \(body); RETURN NEW; END'")
        _ = try cluster.psql(
            "CREATE TRIGGER nse_test_hold BEFORE UPDATE ON nse_fleet_devices FOR EACH ROW "
                + "EXECUTE FUNCTION nse_test_hold()")
    }

    @Test(
        "a takeover whose move of the devices' rows fails is tried again until it is written",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func takeoverMoveIsTriedAgain() throws {
        let cluster = try PostgresCluster()
        let (folderA, _) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: ["--node-lease", "1"])
        defer { nodeA.stop() }
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: ["--node-lease", "1"])
        try Self.hold(cluster, "RAISE EXCEPTION ''refused for the test''")
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
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
        let cluster = try PostgresCluster()
        let (folderA, _) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: ["--node-lease", "1"])
        defer { nodeA.stop() }
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: ["--node-lease", "1"])
        // The move takes a second a row (a remote and a VoIP token): A's stop comes while it is under way.
        try Self.hold(cluster, "PERFORM pg_sleep(1)")
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
        let moving = {
            try cluster.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                    + "AND query LIKE 'UPDATE nse_fleet_devices SET node%'")
        }
        #expect(try FleetTests.eventually(moving, until: { $0 == "1" }, seconds: 15) == "1", "\(nodeA.log)")
        let stopped = nodeA.stop()
        #expect(stopped.status == 0 && stopped.seconds < 5, "\(stopped) \(nodeA.log)")
        // Written whole: B's device names A, whose row serves B's folder and is marked stopped, for the next node.
        #expect(try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") == "A")
        let row = try cluster.psql("SELECT serves, heartbeat_at FROM nse_fleet_nodes WHERE name = 'A'")
        #expect(row.contains(folderB) && row.hasSuffix("|0"), "\(row)")
        #expect(nodeA.log.contains("took over a stopped node's devices"), "\(nodeA.log)")
    }
}
