import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// iOS 18's broadcast channels through the built `nse serve`, curl as the provider: a channel made, activities on
/// two devices of a `--devices` folder subscribed to it with `nse device activity start --channel`, one broadcast
/// reaching both, and the channel still there after a restart (docs/serve.md, "Broadcast channels").
@Suite(.serialized) struct BroadcastTests {
    let root: String
    let folder: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-broadcast")
        folder = root + "/fleet"
        let made = try TestSupport.nse([
            "device", "init-many", folder, "--count", "2", "--bundle-id", "org.example.app",
        ])
        try #require(made.status == 0, "\(made.stderr)")
    }

    func serve(name: String) throws -> (CallCommandTests.Background, String) {
        let server = try CallCommandTests.Background(
            TestSupport.nse, ["serve", "--listen", "127.0.0.1:0", "--devices", folder], in: root, name: name)
        return (server, try server.listeningURL())
    }

    func stop(_ server: CallCommandTests.Background) {
        kill(server.process.processIdentifier, SIGTERM)
        #expect(server.wait(timeout: 5) == 0, "nse serve did not exit 0 within 5 s of SIGTERM: \(server.errors)")
    }

    /// curl over h2c: the status, the response's headers (lower-cased names) and its body.
    func curl(_ arguments: [String]) throws -> (status: Int, headers: [String: String], body: String) {
        let output = try TestSupport.run(
            "/usr/bin/curl", ["-sS", "-i", "--http2-prior-knowledge", "--max-time", "20"] + arguments, timeout: 30)
        let text = output.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        let parts = text.components(separatedBy: "\n\n")
        let head = parts.first?.split(separator: "\n") ?? []
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, headers, parts.dropFirst().joined(separator: "\n\n"))
    }

    func token(_ name: String) throws -> String {
        let config = try JSON.parse(try String(contentsOfFile: folder + "/\(name)/device.json", encoding: .utf8))
        return try #require(config["tokens"]?["remote"]?.stringValue)
    }

    @Test func aBroadcastReachesTheSubscribedActivitiesOfEveryDevice() throws {
        let (server, url) = try serve(name: "serve")
        let made = try curl([
            "-X", "POST", "--data-binary", #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#,
            url + "/1/apps/org.example.app/channels",
        ])
        #expect(made.status == 201, "\(made)")
        let channel = try #require(made.headers["apns-channel-id"])
        for name in ["device-00001", "device-00002"] {
            let started = try TestSupport.nse([
                "device", "activity", "start", folder + "/" + name, "--attributes-type", "Score", "--content-state",
                #"{"home":0,"away":0}"#, "--channel", channel,
            ])
            #expect(started.status == 0, "\(started.stderr)")
        }
        let now = Int64(Date().timeIntervalSince1970)
        let sent = try curl([
            "-H", "apns-push-type: liveactivity", "-H", "apns-channel-id: \(channel)", "-H", "apns-expiration: 0",
            "-H", "apns-priority: 5", "--data-binary",
            #"{"aps":{"timestamp":\#(now),"event":"update","content-state":{"home":1,"away":0}}}"#,
            url + "/4/broadcasts/apps/org.example.app",
        ])
        #expect(sent.status == 200 && sent.headers["apns-request-id"] != nil, "\(sent)")
        for name in ["device-00001", "device-00002"] {
            var outcome: String?
            let until = Date().addingTimeInterval(15)
            while outcome == nil, Date() < until {
                let read = try TestSupport.run(
                    "/usr/bin/curl",
                    ["-sS", "--max-time", "10", "\(url)/v1/devices/\(try token(name))/notifications"], timeout: 20)
                outcome =
                    (try? JSON.parse(read.stdout, options: .init(requireObject: false)))?.arrayValue?.first?[
                        "outcome"]?.stringValue
                if outcome == nil { usleep(50_000) }
            }
            #expect(outcome == "activity-updated", "\(name): \(server.errors)")
            let listed = try JSON.parse(
                try TestSupport.nse(["device", "activity", "list", folder + "/" + name]).stdout)
            #expect(listed["activities"]?.arrayValue?.first?["content_state"]?["home"] == 1)
        }
        let metrics = try TestSupport.run("/usr/bin/curl", ["-sS", "--max-time", "10", url + "/metrics"], timeout: 20)
        #expect(metrics.stdout.contains(#"nse_apns_broadcasts_total{priority="5",status="200",reason=""} 1"#))
        stop(server)
        #expect(FileManager.default.fileExists(atPath: folder + "/.nse-channels.db"))

        // The channel outlives the server, as APNs keeps it until it is deleted.
        let (again, secondURL) = try serve(name: "serve-again")
        let listed = try curl([secondURL + "/1/apps/org.example.app/all-channels"])
        #expect(listed.status == 200 && listed.body.contains(channel), "\(listed)")
        stop(again)
    }
}
