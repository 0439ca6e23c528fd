import Foundation
import NSEFleet
import NSEJSON
import NSETestSupport
import Synchronization
import Testing

/// Two `nse serve` nodes on one throw-away PostgreSQL, each serving its own device: what one node is told or
/// records, the other answers (docs/serve.md, "A fleet on PostgreSQL").
@Suite(.serialized)
struct FleetTests {
    /// A device container and its remote token.
    static func device() throws -> (folder: String, token: String) {
        let folder = try TestSupport.temporaryDirectory("nse-fleet-device") + "/device"
        let made = try TestSupport.nse(["device", "init", folder])
        guard made.status == 0 else { throw TestSupport.SetupError(description: "device init: \(made.stderr)") }
        let shown = try TestSupport.nse(["device", "show", folder])
        guard let token = (try? JSON.parse(shown.stdout))?["tokens"]?["remote"]?.stringValue else {
            throw TestSupport.SetupError(description: "device show: \(shown.stdout)")
        }
        return (folder, token)
    }

    /// Polls `read` until `done` holds or `seconds` pass; the last value read.
    static func eventually<T>(_ read: () throws -> T, until done: (T) -> Bool, seconds: Double = 10) throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        var value = try read()
        while !done(value), Date() < deadline {
            usleep(100_000)
            value = try read()
        }
        return value
    }

    @Test(
        "two nodes share the request log, fault rules, the unavailable switch and results",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func twoNodes() throws {
        let cluster = try PostgresCluster()
        let (folderA, tokenA) = try Self.device()
        let (folderB, tokenB) = try Self.device()
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url)
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url)
        // Started together: each version of the schema was made once, under the advisory lock.
        #expect(try cluster.psql("SELECT count(*) FROM nse_fleet_schema") == "4")

        // A rule of count 3 posted on A answers three pushes, wherever they land.
        let added = try Exchange.send("POST", "\(nodeA.url)/v1/control/faults", json: #"{"status":429,"count":3}"#)
        #expect(added.status == 201)
        let route: [(ServeNode, String)] = [
            (nodeA, tokenA), (nodeB, tokenB), (nodeB, tokenB), (nodeA, tokenA), (nodeB, tokenB), (nodeA, tokenA),
        ]
        let statuses = try route.map { try Exchange.push($0.0, token: $0.1).status }
        #expect(statuses == [429, 429, 429, 200, 200, 200])
        #expect(try Exchange.get("\(nodeB.url)/v1/control/faults").json?["rules"]?.arrayValue?.count == 0)

        // Either node reads the fleet's log: all six, newest first, each with the node that took it.
        for node in [nodeA, nodeB] {
            let log = try Exchange.get("\(node.url)/v1/requests").json?.arrayValue ?? []
            #expect(log.map { $0["node"]?.stringValue ?? "" } == route.reversed().map(\.0.name))
            #expect(log.map { $0["token"]?.stringValue ?? "" } == route.reversed().map(\.1))
            #expect(log.compactMap { $0["status"]?.intValue } == statuses.reversed().map(Int64.init))
            let ids = log.compactMap { $0["id"]?.intValue }
            #expect(ids.count == 6 && ids == ids.sorted(by: >))
        }
        let onlyB = try Exchange.get("\(nodeA.url)/v1/requests?token=\(tokenB)&limit=2").json?.arrayValue ?? []
        #expect(onlyB.count == 2 && onlyB.allSatisfy { $0["node"]?.stringValue == "B" })

        // A's results, read on A from its device's store and on B from the fleet's copies: the same answer.
        let local = try Self.eventually(
            { try Exchange.get("\(nodeA.url)/v1/devices/\(tokenA)/notifications") },
            until: { $0.json?.arrayValue?.count == 2 })
        #expect(local.json?.arrayValue?.count == 2)
        let remote = try Self.eventually(
            { try Exchange.get("\(nodeB.url)/v1/devices/\(tokenA)/notifications") },
            until: { $0.json?.arrayValue?.count == 2 })
        #expect(remote.status == 200)
        #expect(remote.json == local.json)
        #expect(try Exchange.get("\(nodeB.url)/v1/devices/abcdef12/notifications").status == 400)

        // A's results stream from B's `GET /v1/events` too (following A's token), and from A's own, once each.
        let onB = try EventCapture("\(nodeB.url)/v1/events?device=\(tokenA)", seconds: 4)
        let onA = try EventCapture("\(nodeA.url)/v1/events", seconds: 4)
        let pushed = try Exchange.curl([
            "-D", "-", "-H", "apns-topic: org.example.app", "-d", #"{"aps":{"alert":"event"}}"#,
            "\(nodeA.url)/3/device/\(tokenA)",
        ])
        let apnsID =
            pushed.body.split(separator: "\r\n").first { $0.lowercased().hasPrefix("apns-id:") }?
            .split(separator: " ").last.map(String.init) ?? "none"
        #expect(pushed.status == 200)
        for stream in [onB.finish(), onA.finish()] {
            #expect(stream.components(separatedBy: apnsID).count - 1 == 1, "\(stream)")
        }

        // The unavailable switch set on B answers A's pushes 503, until it is cleared on A.
        #expect(
            try Exchange.send("PUT", "\(nodeB.url)/v1/control/unavailable", json: #"{"reason":"Shutdown"}"#).status
                == 204)
        let refused = try Exchange.push(nodeA, token: tokenA)
        #expect(refused.status == 503 && refused.json?["reason"]?.stringValue == "Shutdown")
        #expect(try Exchange.send("DELETE", "\(nodeA.url)/v1/control/unavailable").status == 204)
        #expect(try Exchange.push(nodeA, token: tokenA).status == 200)

        // Cleared on B, the log is empty on A.
        #expect(try Exchange.send("DELETE", "\(nodeB.url)/v1/requests").status == 204)
        #expect(try Exchange.get("\(nodeA.url)/v1/requests").json?.arrayValue?.count == 0)

        for node in [nodeA, nodeB] {
            let stopped = node.stop()
            #expect(stopped.status == 0, "node \(node.name): \(node.log)")
            #expect(stopped.seconds < 5)
        }
        // Every result A recorded was copied before it exited (3 pushes answered 200 to its device).
        #expect(try cluster.psql("SELECT count(*) FROM nse_fleet_results WHERE node = 'A'") == "4")

        // A schema newer than this nse knows stops a node before it listens: one line, status 78.
        _ = try cluster.psql("INSERT INTO nse_fleet_schema (version) VALUES (99)")
        let newer = try TestSupport.nse([
            "serve", "--listen", "127.0.0.1:0", "--device", folderA, "--database", cluster.url,
        ])
        #expect(newer.status == 78)
        #expect(newer.stderr.contains("newer than this nse knows") && newer.stderr.split(separator: "\n").count == 1)
    }

    @Test(
        "a fault rule's count is used up exactly, with pushes racing on both nodes",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func racingCount() throws {
        let cluster = try PostgresCluster()
        let (folderA, tokenA) = try Self.device()
        let (folderB, tokenB) = try Self.device()
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url)
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url)
        #expect(
            try Exchange.send("POST", "\(nodeB.url)/v1/control/faults", json: #"{"status":500,"count":5}"#).status
                == 201)
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            let (node, token) = index % 2 == 0 ? (nodeA, tokenA) : (nodeB, tokenB)
            let status = (try? Exchange.push(node, token: token).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        let all = statuses.withLock { $0 }
        #expect(all.filter { $0 == 500 }.count == 5)
        #expect(all.filter { $0 == 200 }.count == 11)
        for node in [nodeA, nodeB] { #expect(node.stop().status == 0) }
    }

    @Test(
        "a --database that does not parse or cannot be reached: one line, status 78, no password",
        arguments: [
            ("mysql://nse@127.0.0.1/db", "--database: expected postgres://"),
            ("postgres://nse:secret@127.0.0.1:PORT/postgres", "cannot connect: connection refused"),
            ("postgres://nse:secret@127.0.0.1:5432", "no database name"),
        ])
    func badDatabase(url: String, says: String) throws {
        let (folder, _) = try Self.device()
        let closed = try PostgresCluster.freePort()
        let database = url.replacingOccurrences(of: "PORT", with: String(closed))
        let output = try TestSupport.nse([
            "serve", "--listen", "127.0.0.1:0", "--device", folder, "--database", database,
        ])
        #expect(output.status == 78)
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(output.stderr)")
        #expect(output.stderr.hasPrefix("nse: serve: ") && output.stderr.contains(says), "\(output.stderr)")
        #expect(!output.stderr.contains("secret"))
        #expect(output.stdout.isEmpty)
    }
}
