import Foundation
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Broadcast channels in a fleet (docs/serve.md, "A fleet on PostgreSQL"): a channel made through one node is every
/// node's, and a broadcast taken by one node reaches the subscribed activities of every node's devices, those of a
/// node taken over too.
@Suite(.serialized)
struct FleetBroadcastTests {
    static let app = "/1/apps/org.example.app"

    /// Makes a channel through `node`; its id, or the refusal's reason.
    static func create(_ node: ServeNode, policy: Int = 1) throws -> (status: Int, id: String?, reason: String?) {
        let made = try Exchange.curl([
            "-D", "-", "-H", "content-type: application/json",
            "-d", #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#, "\(node.url)\(app)/channels",
        ])
        let id = made.body.split(separator: "\r\n").first { $0.lowercased().hasPrefix("apns-channel-id:") }?
            .split(separator: " ").last.map(String.init)
        let reason = made.body.split(separator: "\r\n\r\n").last.flatMap { try? JSON.parse(Array($0.utf8)) }?[
            "reason"]?.stringValue
        return (made.status, id, reason)
    }

    /// `GET` or `DELETE` of `channel` through `node`.
    static func channel(_ method: String, _ node: ServeNode, _ channel: String) throws -> Exchange {
        try Exchange.curl(["-X", method, "-H", "apns-channel-id: \(channel)", "\(node.url)\(app)/channels"])
    }

    /// A broadcast of `home` to `channel` through `node`.
    static func broadcast(_ node: ServeNode, _ channel: String, home: Int) throws -> Exchange {
        try Exchange.curl([
            "-H", "apns-push-type: liveactivity", "-H", "apns-channel-id: \(channel)", "-H", "apns-expiration: 0",
            "-d",
            #"{"aps":{"timestamp":\#(Int(Date().timeIntervalSince1970)),"event":"update","content-state":{"home":\#(home)}}}"#,
            "\(node.url)/4/broadcasts/apps/org.example.app",
        ])
    }

    /// Starts an activity listening to `channel` on the device in `folder`, as its app does.
    static func listen(_ folder: String, to channel: String) throws {
        let started = try TestSupport.nse([
            "device", "activity", "start", folder, "--attributes-type", "Score", "--content-state", #"{"home":0}"#,
            "--channel", channel,
        ])
        guard started.status == 0 else {
            throw TestSupport.SetupError(description: "activity start: \(started.stderr)")
        }
    }

    /// The device's results that came from a broadcast on `channel`, read through `node`.
    static func broadcasts(_ node: ServeNode, token: String, channel: String) throws -> [JSON] {
        let results = try Exchange.get("\(node.url)/v1/devices/\(token)/notifications").json?.arrayValue ?? []
        return results.filter { $0["live_activity"]?["channel_id"]?.stringValue == channel }
    }

    @Test(
        "a channel made through one node is every node's; a broadcast reaches every node's devices, a stopped node's too",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func channelsAcrossNodes() throws {
        let cluster = try PostgresCluster()
        let (folderA, tokenA) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        let extra = ["--channel-limit", "2", "--node-lease", "1"]
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: extra)
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: extra)

        // Made through A: read and listed through B.
        let first = try Self.create(nodeA, policy: 1)
        let scores = try #require(first.id, "channel not made: \(first)")
        let read = try Self.channel("GET", nodeB, scores)
        #expect(read.status == 200 && read.json?["message-storage-policy"]?.intValue == 1, "\(read.body)")
        #expect(try Exchange.get("\(nodeB.url)\(Self.app)/all-channels").json?["channels"] == [.string(scores)])
        // The limit is the fleet's: one more through B, then none through A.
        let second = try Self.create(nodeB, policy: 0)
        let news = try #require(second.id)
        let third = try Self.create(nodeA)
        #expect(third.status == 400 && third.reason == "CannotCreateChannelConfig", "\(third)")

        // One activity on each node's device listens to the first channel; B's device also to the second.
        try Self.listen(folderA, to: scores)
        try Self.listen(folderB, to: scores)
        try Self.listen(folderB, to: news)

        // A broadcast through B reaches both devices' activities, once each.
        #expect(try Self.broadcast(nodeB, scores, home: 1).status == 200)
        for (node, token) in [(nodeA, tokenA), (nodeB, tokenB)] {
            let got = try FleetTests.eventually(
                { try Self.broadcasts(node, token: token, channel: scores) }, until: { $0.count >= 1 })
            #expect(got.count == 1, "node \(node.name): \(got)")
            #expect(got.first?["outcome"]?.stringValue == "activity-updated", "\(got)")
        }

        // Deleted through B: A answers as APNs does for it.
        #expect(try Self.channel("DELETE", nodeB, scores).status == 204)
        let gone = try Self.broadcast(nodeA, scores, home: 2)
        #expect(gone.status == 400 && gone.json?["reason"]?.stringValue == "ChannelNotRegistered", "\(gone.body)")
        #expect(try Self.channel("DELETE", nodeA, scores).status == 404)
        #expect(try Exchange.get("\(nodeA.url)\(Self.app)/all-channels").json?["channels"] == [.string(news)])

        // The fleet's unavailable switch, set through A, answers B's channel routes too.
        #expect(
            try Exchange.send("PUT", "\(nodeA.url)/v1/control/unavailable", json: #"{"reason":"Shutdown"}"#).status
                == 204)
        let refused = try Self.channel("GET", nodeB, news)
        #expect(refused.status == 503 && refused.json?["reason"]?.stringValue == "Shutdown", "\(refused.body)")
        #expect(try Exchange.send("DELETE", "\(nodeB.url)/v1/control/unavailable").status == 204)

        // A takeover marks the stopped node's row taken, then reads its folders, then moves them to the taker's row:
        // a broadcast in between is owed to them all the same. (B is alive: its row marked by hand, B then finds
        // nothing owed to it until the mark is gone.)
        _ = try cluster.psql("UPDATE nse_fleet_nodes SET taken_by = 'A' WHERE name = 'B'")
        #expect(try Self.broadcast(nodeA, news, home: 2).status == 200)
        #expect(
            try cluster.psql(
                "SELECT count(*) FROM nse_fleet_broadcast_folders f JOIN nse_fleet_broadcasts b ON b.id = f.broadcast_id "
                    + "WHERE b.channel_id = '\(news)'") != "0")
        _ = try cluster.psql("UPDATE nse_fleet_nodes SET taken_by = NULL WHERE name = 'B'")
        let marked = try FleetTests.eventually(
            { try Self.broadcasts(nodeB, token: tokenB, channel: news) }, until: { $0.count >= 1 })
        #expect(marked.count == 1, "\(marked)")

        // B killed: a broadcast through A at once is owed to B's device folder, and handed out there by A once A
        // has taken B over.
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
        #expect(try Self.broadcast(nodeA, news, home: 3).status == 200)
        let late = try FleetTests.eventually(
            { try Self.broadcasts(nodeA, token: tokenB, channel: news) }, until: { $0.count >= 2 }, seconds: 20)
        #expect(late.count == 2, "\(late) \(nodeA.log)")
        #expect(nodeA.log.contains("took over a stopped node's devices"))
        let owed = try FleetTests.eventually(
            { try cluster.psql("SELECT count(*) FROM nse_fleet_broadcast_folders") }, until: { $0 == "0" })
        #expect(owed == "0")
        #expect(try cluster.psql("SELECT count(*) FROM nse_fleet_broadcasts") == "0")
        // A's own device listens to no broadcast of the second channel.
        #expect(try Self.broadcasts(nodeA, token: tokenA, channel: news).isEmpty)

        // B started again gets its device back, and what is owed to its folder from then on is B's to hand out.
        let again = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: extra)
        #expect(try Self.broadcast(nodeA, news, home: 4).status == 200)
        let back = try FleetTests.eventually(
            { try Self.broadcasts(again, token: tokenB, channel: news) }, until: { $0.count >= 3 })
        #expect(back.count == 3, "\(back)")
        #expect(again.log.contains("broadcast handed out") && again.log.contains("devices given back by the fleet"))

        for node in [nodeA, again] {
            let stopped = node.stop()
            #expect(stopped.status == 0 && stopped.seconds < 5, "node \(node.name): \(node.log)")
        }
    }

    @Test(
        "what is owed to a folder no node serves is dropped past a day and its expiration, not before",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func owedBroadcastsExpire() throws {
        let cluster = try PostgresCluster()
        let (folder, _) = try FleetTests.device()
        var node = try ServeNode(name: "A", device: folder, database: cluster.url)
        let made = try Self.create(node)
        let channel = try #require(made.id, "\(made)")
        // Broadcasts owed to a folder no node serves (a node removed for good): two days old, two days old but
        // expiring tomorrow, forty days old expiring tomorrow, an hour old, and two days old expiring in the far
        // future (an `apns-expiration` a thousand times too large made the drop's arithmetic fail: none was dropped).
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let day: Int64 = 86_400_000
        let rows: [(label: String, received: Int64, expiration: Int64)] = [
            ("old", now - 2 * day, 0), ("stored", now - 2 * day, (now + day) / 1000),
            ("ancient", now - 40 * day, (now + day) / 1000), ("recent", now - day / 24, 0),
            ("far", now - 2 * day, 99_999_999_999_999_999),
        ]
        node.stop()
        for row in rows {
            _ = try cluster.psql(
                """
                WITH b AS (INSERT INTO nse_fleet_broadcasts (channel_id, request_id, unique_id, priority, expiration,
                    payload, received_at) VALUES ('\(channel)', '\(row.label)', '\(row.label)', 10, \(row.expiration),
                    '\\x7b7d', \(row.received)) RETURNING id)
                INSERT INTO nse_fleet_broadcast_folders (broadcast_id, folder) SELECT id, '/nowhere' FROM b
                """)
        }
        // Dropped as the node starts hand-outs, then once a minute.
        node = try ServeNode(name: "A", device: folder, database: cluster.url)
        defer { node.stop() }
        let kept = {
            try cluster.psql("SELECT string_agg(request_id, ',' ORDER BY request_id) FROM nse_fleet_broadcasts")
        }
        let left = try FleetTests.eventually(kept, until: { $0 == "far,recent,stored" })
        #expect(left == "far,recent,stored", "\(node.log)")
        #expect(try cluster.psql("SELECT count(*) FROM nse_fleet_broadcast_folders") == "3")
        #expect(node.log.contains("broadcasts owed to folders no node served for a day dropped"), "\(node.log)")
    }

    @Test func aNodeOfAFleetTakesNoChannelFileOfItsOwn() throws {
        let (folder, _) = try FleetTests.device()
        let refused = try TestSupport.nse([
            "serve", "--listen", "127.0.0.1:0", "--device", folder, "--database", "postgres://nse@127.0.0.1:1/nse",
            "--channels", folder + "/channels.db",
        ])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--channels does not go with --database"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/channels.db"))
    }
}
