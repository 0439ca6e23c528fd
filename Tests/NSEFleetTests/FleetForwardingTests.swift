import Foundation
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Which node serves which device: a push reaching another node goes on to the serving one, and a node that stops
/// has its devices, and the pushes it answered 200 and left unrun, taken over (docs/serve.md, "A fleet on
/// PostgreSQL").
@Suite(.serialized)
struct FleetForwardingTests {
    @Test(
        "a push for another node's device is forwarded; a killed node's devices and unrun pushes are taken over",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func forwardingAndTakeover() throws {
        let cluster = try PostgresCluster()
        let (folderA, tokenA) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        // B's extension takes 30 s: B is killed long before the push it answered has run.
        let slow = try TestSupport.temporaryDirectory("nse-fleet-slow") + "/slow.sh"
        try TestSupport.write("#!/bin/sh\nread -r request\nexec sleep 30\n", to: slow)
        chmod(slow, 0o755)
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: ["--node-lease", "1"])
        let nodeB = try ServeNode(
            name: "B", device: folderB, database: cluster.url,
            extra: ["--extension", slow, "--concurrency", "1", "--node-lease", "1"])

        // A push to B's device through A: B records it and answers, A sends that answer back and logs it.
        let id = "00000000-0000-4000-8000-0000000000f1"
        let forwarded = try Exchange.curl([
            "-D", "-", "--http2-prior-knowledge", "-H", "apns-topic: org.example.app", "-H", "apns-id: \(id)",
            "-d", #"{"aps":{"alert":"hello","mutable-content":1}}"#, "\(nodeA.url)/3/device/\(tokenB)",
        ])
        #expect(forwarded.status == 200, "\(forwarded.body)")
        #expect(forwarded.body.lowercased().contains("apns-unique-id:"))
        let logged = try Exchange.get("\(nodeA.url)/v1/requests?token=\(tokenB)").json?.arrayValue?.first
        #expect(logged?["node"]?.stringValue == "A")
        #expect(logged?["forwarded_to"]?.stringValue == "B")
        #expect(logged?["status"]?.intValue == 200)
        #expect(try cluster.psql("SELECT count(*) FROM nse_fleet_requests") == "1")

        // Many pushes forwarded on the one connection B keeps to A: each answered. (A forwarder that closed each
        // stream on its answer sent A a reset per push, and A's guard against rapid resets took the connection
        // down after 200, with the pushes in flight on it: 500s for pushes A had recorded.)
        let body = try TestSupport.temporaryDirectory("nse-fleet-body") + "/body.json"
        try TestSupport.write(#"{"aps":{"alert":"many"}}"#, to: body)
        let many = try TestSupport.run(
            "/usr/bin/h2load",
            [
                "-n", "400", "-c", "2", "-m", "16", "-d", body, "-H", "apns-topic: org.example.app",
                "\(nodeB.url)/3/device/\(tokenA)",
            ], timeout: 120)
        #expect(many.stdout.contains("status codes: 400 2xx"), "\(many.stdout)")
        #expect(!nodeA.log.contains("answer not delivered"))
        #expect(!nodeB.log.contains("forwarded push not answered"))

        // The device routes answer for another node's device too: A's device taken offline through B, a push held
        // for it through B's /v1/notify (202), and delivered once it is back online, again through B.
        let offline = try Exchange.send(
            "PUT", "\(nodeB.url)/v1/control/devices/\(tokenA)/online", json: #"{"online":false}"#)
        #expect(offline.status == 200 && offline.json?["online"]?.boolValue == false, "\(offline.body)")
        let held = try Exchange.send(
            "POST", "\(nodeB.url)/v1/notify",
            json: #"{"device":"\#(tokenA)","payload":{"aps":{"alert":"while away"}}}"#)
        #expect(held.status == 202 && held.json?["held_offline"]?.boolValue == true, "\(held.body)")
        let back = try Exchange.send(
            "PUT", "\(nodeB.url)/v1/control/devices/\(tokenA)/online", json: #"{"online":true}"#)
        #expect(back.status == 200 && back.json?["online"]?.boolValue == true, "\(back.body)")
        let delivered = try FleetTests.eventually(
            { try Exchange.get("\(nodeA.url)/v1/devices/\(tokenA)/notifications?limit=1000") },
            until: {
                $0.json?.arrayValue?.contains { $0["apns_id"]?.stringValue == held.json?["apns_id"]?.stringValue }
                    == true
            })
        #expect(delivered.json?.arrayValue?.contains { $0["apns_id"] == held.json?["apns_id"] } == true)
        let unknownOnline = try Exchange.send(
            "PUT", "\(nodeB.url)/v1/control/devices/\(String(repeating: "cd", count: 32))/online",
            json: #"{"online":false}"#)
        #expect(unknownOnline.status == 400)
        // The phone's lock too: set through B on A's device, which A serves.
        let locked = try Exchange.send(
            "PUT", "\(nodeB.url)/v1/control/devices/\(tokenA)/lock", json: #"{"state":"locked"}"#)
        #expect(locked.status == 200 && locked.json?["state"]?.stringValue == "locked", "\(locked.body)")
        let config = try JSON.parse(String(contentsOfFile: folderA + "/device.json", encoding: .utf8))
        #expect(config["lock_state"]?.stringValue == "locked")

        // A token no node serves: 400 BadDeviceToken, as before.
        let unknown = try Exchange.push(nodeA, token: String(repeating: "ab", count: 32))
        #expect(unknown.status == 400 && unknown.json?["reason"]?.stringValue == "BadDeviceToken")

        // A client cannot pass for a node: the fleet's headers without its secret are dropped, never recorded.
        let posing = try Exchange.curl([
            "-H", "apns-topic: org.example.app", "-H", "nse-fleet-forwarded: guess", "-H", "nse-fleet-team: X",
            "-d", #"{"aps":{"alert":"hello"}}"#, "\(nodeA.url)/3/device/\(tokenA)",
        ])
        #expect(posing.status == 200)
        let posed = try Exchange.get("\(nodeA.url)/v1/requests?token=\(tokenA)").json?.arrayValue?.first
        #expect(posed?["headers"]?["nse-fleet-forwarded"] == nil && posed?["headers"]?["nse-fleet-team"] == nil)

        // Either node lists the fleet's devices, each with its node, in the same order; a client posing as a node
        // still gets the whole fleet's.
        func listed(_ url: String, headers: [String] = []) throws -> [String] {
            let answer = try Exchange.curl(headers.flatMap { ["-H", $0] } + ["\(url)/v1/devices"])
            #expect(answer.status == 200, "\(answer.body)")
            return (answer.json?.arrayValue ?? []).map {
                "\($0["remote_token"]?.stringValue ?? "?")@\($0["node"]?.stringValue ?? "?")"
            }
        }
        let fleetDevices = ["\(tokenA)@A", "\(tokenB)@B"]
        #expect(try listed(nodeA.url) == fleetDevices)
        #expect(try listed(nodeB.url) == fleetDevices)
        #expect(try listed(nodeA.url, headers: ["nse-fleet-forwarded: guess", "nse-fleet-node: B"]) == fleetDevices)

        // B killed while its extension holds the push: A takes B's device over and runs it, once.
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
        // Listing meanwhile waits for the takeover (B cannot be reached) and names A for both, or, past the takeover
        // window, is answered 503 as a push would be: never a list without B's device.
        let meanwhile = try Exchange.get("\(nodeA.url)/v1/devices")
        if meanwhile.status == 503 {
            #expect(meanwhile.json?["reason"]?.stringValue == "ServiceUnavailable")
        } else {
            let tokens = meanwhile.json?.arrayValue?.map {
                "\($0["remote_token"]?.stringValue ?? "?")@\($0["node"]?.stringValue ?? "?")"
            }
            #expect(
                meanwhile.status == 200 && Set(tokens ?? []) == ["\(tokenA)@A", "\(tokenB)@A"], "\(meanwhile.body)")
        }
        let taken = try FleetTests.eventually(
            { try Exchange.get("\(nodeA.url)/v1/devices/\(tokenB)/notifications") },
            until: { $0.json?.arrayValue?.contains { $0["apns_id"]?.stringValue == id } == true }, seconds: 15)
        let rerun = taken.json?.arrayValue?.first { $0["apns_id"]?.stringValue == id }
        #expect(rerun?["redelivered"]?.boolValue == true, "\(taken.body) \(nodeA.log)")
        #expect(taken.json?.arrayValue?.count == 1)
        #expect(nodeA.log.contains("took over a stopped node's devices"))
        #expect(try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") == "A")

        // B's device is A's own now: listed as A's, and a push to it is not forwarded.
        #expect(try Set(listed(nodeA.url)) == ["\(tokenA)@A", "\(tokenB)@A"])
        #expect(try Exchange.push(nodeA, token: tokenB).status == 200)
        let own = try Exchange.get("\(nodeA.url)/v1/requests?token=\(tokenB)").json?.arrayValue?.first
        #expect(own?["forwarded_to"] == nil && own?["status"]?.intValue == 200)

        let stopped = nodeA.stop()
        #expect(stopped.status == 0 && stopped.seconds < 5, "\(nodeA.log)")
        // Each of B's device's results is in the fleet once: the rerun push and the new one.
        let copies = try FleetTests.eventually(
            { try cluster.psql("SELECT count(*) FROM nse_fleet_results WHERE apns_id = '\(id)'") }, until: { $0 == "1" }
        )
        #expect(copies == "1")
    }

    @Test(
        "a node restarted before anyone took it over serves again what it had taken over",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func restartedTakerServesWhatItTookOver() throws {
        let cluster = try PostgresCluster()
        let (folderA, tokenA) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        var nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: ["--node-lease", "1"])
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: ["--node-lease", "1"])
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
        let owner = { try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") }
        #expect(try FleetTests.eventually(owner, until: { $0 == "A" }, seconds: 15) == "A", "\(nodeA.log)")

        // A killed and started again: no node is left to take it over, so its row still holds B's folder.
        kill(nodeA.process.processIdentifier, SIGKILL)
        nodeA.process.waitUntilExit()
        nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url, extra: ["--node-lease", "1"])
        defer { nodeA.stop() }
        #expect(nodeA.log.contains("serving again what this node had taken over before it restarted"), "\(nodeA.log)")
        let serves = try cluster.psql("SELECT serves FROM nse_fleet_nodes WHERE name = 'A'")
        #expect(serves.contains(folderB) && serves.contains(folderA), "\(serves)")
        for token in [tokenA, tokenB] {
            let pushed = try Exchange.push(nodeA, token: token)
            #expect(pushed.status == 200, "\(pushed.body)")
            let results = try FleetTests.eventually(
                { try Exchange.get("\(nodeA.url)/v1/devices/\(token)/notifications").json?.arrayValue ?? [] },
                until: { !$0.isEmpty })
            #expect(results.count == 1, "\(results)")
        }
        let stopped = nodeA.stop()
        #expect(stopped.status == 0 && stopped.seconds < 5, "\(nodeA.log)")
    }

    @Test(
        "a node started again gets its devices back from the node that took them over, each push run once",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func restartedNodeGetsItsDevicesBack() throws {
        let cluster = try PostgresCluster()
        let (folderA, tokenA) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        // A's extension takes 3 s, one push at a time: a push of B's device is running on A, and another waits in
        // A's queue, when B asks for its device back.
        let slow = try TestSupport.temporaryDirectory("nse-fleet-slow") + "/slow.sh"
        try TestSupport.write("#!/bin/sh\nread -r request\nexec sleep 3\n", to: slow)
        chmod(slow, 0o755)
        let nodeA = try ServeNode(
            name: "A", device: folderA, database: cluster.url,
            extra: ["--extension", slow, "--concurrency", "1", "--node-lease", "1"])
        defer { nodeA.stop() }
        var nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: ["--node-lease", "1"])
        kill(nodeB.process.processIdentifier, SIGKILL)
        nodeB.process.waitUntilExit()
        let owner = { try cluster.psql("SELECT node FROM nse_fleet_devices WHERE token = '\(tokenB)'") }
        #expect(try FleetTests.eventually(owner, until: { $0 == "A" }, seconds: 15) == "A", "\(nodeA.log)")

        // A client cannot ask for devices: without the fleet's secret the path is not there.
        let posing = try Exchange.send(
            "POST", "\(nodeA.url)/v1/fleet/handback", json: #"{"node":"B","folders":[],"devices":["\#(folderB)"]}"#)
        #expect(posing.status == 404 && posing.json?["reason"]?.stringValue == "BadPath", "\(posing.body)")

        func push(_ id: String) throws -> Int {
            try Exchange.curl([
                "-H", "apns-topic: org.example.app", "-H", "apns-id: \(id)", "-d",
                #"{"aps":{"alert":"hello","mutable-content":1}}"#, "\(nodeA.url)/3/device/\(tokenB)",
            ]).status
        }
        let running = "00000000-0000-4000-8000-0000000000a1"
        let waiting = "00000000-0000-4000-8000-0000000000a2"
        #expect(try push(running) == 200)
        #expect(try push(waiting) == 200)

        // B again, same device: it starts (it stopped with status 75 before), once A has given the device back.
        nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url, extra: ["--node-lease", "1"])
        defer { nodeB.stop() }
        #expect(nodeB.log.contains("devices given back by the fleet"), "\(nodeB.log)")
        #expect(nodeA.log.contains("gave devices back to the node that served them"), "\(nodeA.log)")
        #expect(try owner() == "B")
        // B beat from the handback on: nobody found it stopped while it started.
        #expect(!nodeA.log.contains("stopped node's devices not taken over"), "\(nodeA.log)")
        let serves = try cluster.psql("SELECT serves FROM nse_fleet_nodes WHERE name = 'A'")
        #expect(!serves.contains(folderB) && serves.contains(folderA), "\(serves)")

        // The push running on A ended there; the one waiting in A's queue was left to B, which ran it as one a
        // previous run left unrun. Each once.
        let results = try FleetTests.eventually(
            { try Exchange.get("\(nodeB.url)/v1/devices/\(tokenB)/notifications") },
            until: { ($0.json?.arrayValue?.filter { $0["outcome"] != nil && $0["outcome"] != .null }.count ?? 0) >= 2 })
        let rows = results.json?.arrayValue ?? []
        #expect(rows.filter { $0["apns_id"]?.stringValue == running }.count == 1, "\(results.body)")
        #expect(rows.filter { $0["apns_id"]?.stringValue == waiting }.count == 1, "\(results.body)")
        #expect(rows.first { $0["apns_id"]?.stringValue == running }?["redelivered"] == nil, "\(results.body)")
        #expect(rows.first { $0["apns_id"]?.stringValue == waiting }?["redelivered"]?.boolValue == true)
        #expect(nodeA.log.contains("push left for the node its device went back to"), "\(nodeA.log)")

        // Pushes to B's device through A go on to B now; A's own device stays A's.
        #expect(try push("00000000-0000-4000-8000-0000000000a3") == 200)
        let logged = try Exchange.get("\(nodeA.url)/v1/requests?token=\(tokenB)").json?.arrayValue?.first
        #expect(logged?["forwarded_to"]?.stringValue == "B", "\(String(describing: logged))")
        #expect(try Exchange.push(nodeA, token: tokenA).status == 200)

        // A third server on B's device: B did not take it over from anyone, so it keeps it; the newcomer stops with
        // status 75, saying why.
        let third = try TestSupport.nse([
            "serve", "--listen", "127.0.0.1:0", "--device", folderB, "--database", cluster.url, "--node-name", "C",
        ])
        #expect(third.status == 75, "\(third.stderr)")
        #expect(third.stderr.contains("node B did not give them back") && third.stderr.contains("not taken over"))

        let stoppedB = nodeB.stop()
        #expect(stoppedB.status == 0 && stoppedB.seconds < 5, "\(nodeB.log)")
    }

    @Test(
        "a Live Activity's token, known only to its device's node, is found and pushed to through any node",
        .enabled(if: PostgresCluster.binaries != nil, Comment(rawValue: PostgresCluster.missing)))
    func liveActivityTokensAreFoundOnTheirNode() throws {
        let cluster = try PostgresCluster()
        let (folderA, _) = try FleetTests.device()
        let (folderB, tokenB) = try FleetTests.device()
        let nodeA = try ServeNode(name: "A", device: folderA, database: cluster.url)
        let nodeB = try ServeNode(name: "B", device: folderB, database: cluster.url)
        defer {
            nodeA.stop()
            nodeB.stop()
        }
        // The app on B's phone starts an activity while both nodes run: only B can find its token.
        let started = try TestSupport.nse([
            "device", "activity", "start", folderB, "--attributes-type", "Delivery", "--content-state",
            #"{"eta":"10 min"}"#,
        ])
        let activity = try #require((try? JSON.parse(started.stdout))?["push_token"]?.stringValue, "\(started.stderr)")
        #expect(try cluster.psql("SELECT count(*) FROM nse_fleet_devices WHERE token = '\(activity)'") == "0")

        let listed = try Exchange.get("\(nodeA.url)/v1/devices?token=\(activity)")
        #expect(listed.status == 200, "\(listed.body)")
        let found = listed.json?.arrayValue ?? []
        #expect(found.count == 1 && found.first?["remote_token"]?.stringValue == tokenB, "\(listed.body)")
        #expect(found.first?["node"]?.stringValue == "B")

        let update =
            #"{"aps":{"timestamp":\#(Int(Date().timeIntervalSince1970)),"event":"update","content-state":{"eta":"5 min"}}}"#
        // A stream on A following the activity's token carries its device's results.
        let following = try EventCapture("\(nodeA.url)/v1/events?device=\(activity)", seconds: 5)
        for eta in ["5 min", "4 min"] {
            let pushed = try Exchange.curl([
                "-H", "apns-topic: org.example.app.push-type.liveactivity", "-H", "apns-push-type: liveactivity",
                "-H", "apns-priority: 5", "-d", update.replacingOccurrences(of: "5 min", with: eta),
                "\(nodeA.url)/3/device/\(activity)",
            ])
            #expect(pushed.status == 200, "\(pushed.body) \(nodeA.log)")
        }
        let logged = try Exchange.get("\(nodeA.url)/v1/requests?token=\(activity)").json?.arrayValue ?? []
        #expect(logged.count == 2 && logged.allSatisfy { $0["forwarded_to"]?.stringValue == "B" }, "\(logged)")
        // Its results, read through A, are its device's (copied to the fleet by B).
        let results = try FleetTests.eventually(
            { try Exchange.get("\(nodeA.url)/v1/devices/\(activity)/notifications") },
            until: { ($0.json?.arrayValue ?? []).filter { $0["push_type"]?.stringValue == "liveactivity" }.count == 2 })
        let outcomes = (results.json?.arrayValue ?? []).compactMap { $0["outcome"]?.stringValue }
        #expect(outcomes == ["activity-updated", "activity-updated"], "\(results.body)")
        let streamed = following.finish()
        #expect(streamed.components(separatedBy: #""outcome":"activity-updated""#).count - 1 == 2, "\(streamed)")
        // A stream opened once A knows where the token is (its pushes went to B) follows it too.
        let later = try EventCapture("\(nodeA.url)/v1/events?device=\(activity)", seconds: 4)
        let third = try Exchange.curl([
            "-H", "apns-topic: org.example.app.push-type.liveactivity", "-H", "apns-push-type: liveactivity",
            "-H", "apns-priority: 5", "-d", update.replacingOccurrences(of: "5 min", with: "3 min"),
            "\(nodeA.url)/3/device/\(activity)",
        ])
        #expect(third.status == 200, "\(third.body)")
        let laterStream = later.finish()
        #expect(laterStream.components(separatedBy: #""outcome":"activity-updated""#).count - 1 == 1, "\(laterStream)")

        // A token no node holds is still 400 BadDeviceToken, asked of every node once.
        let unknown = try Exchange.push(nodeA, token: String(repeating: "ef", count: 32))
        #expect(unknown.status == 400 && unknown.json?["reason"]?.stringValue == "BadDeviceToken")
        #expect(try Exchange.get("\(nodeA.url)/v1/devices?token=\(String(repeating: "ef", count: 32))").body == "[]")
        #expect(try Exchange.get("\(nodeA.url)/v1/devices?token=not-hex").status == 400)
    }
}
