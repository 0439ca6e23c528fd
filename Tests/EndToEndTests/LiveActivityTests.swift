import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse device activity` and `nse serve` with Live Activities, as a user runs them: the built binaries, curl and
/// `nse push` as the provider (docs/device.md, docs/serve.md "Live Activities").
@Suite(.serialized) struct LiveActivityTests {
    let root: String
    let device: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-live-activity")
        device = root + "/bob"
        let created = try TestSupport.nse(["device", "init", device, "--bundle-id", "org.example.app"])
        try #require(created.status == 0, "\(created.stderr)")
    }

    /// `nse ARGS`, its stdout as JSON; the status must be 0.
    func json(_ arguments: [String]) throws -> JSON {
        let output = try TestSupport.nse(arguments)
        try #require(output.status == 0, "nse \(arguments.joined(separator: " ")): \(output.stderr)")
        return try JSON.parse(output.stdout)
    }

    /// A refusal: the exit status and the one line on stderr.
    func refused(_ arguments: [String]) throws -> (Int32, String) {
        let output = try TestSupport.nse(arguments)
        #expect(output.stdout.isEmpty)
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(output.stderr)")
        return (output.status, String(lines.first ?? ""))
    }

    @Test func theAppStartsListsAndEndsItsActivities() throws {
        let started = try json([
            "device", "activity", "start", device, "--attributes-type", "Delivery", "--attributes",
            #"{"order":"42"}"#, "--content-state", #"{"eta":"10 min"}"#,
        ])
        let token = try #require(started["push_token"]?.stringValue)
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        #expect(started["phase"] == "active" && started["origin"] == "app" && started["channel_id"] == .null)
        #expect(started["content_state"]?["eta"] == "10 min" && started["attributes"]?["order"] == "42")
        let file = device + "/live-activities.json"
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
        let startToken = try json([
            "device", "activity", "push-to-start-token", device, "--attributes-type", "Delivery",
        ])
        let pushToStart = try #require(startToken["push_to_start_token"]?.stringValue)
        #expect(
            try json(["device", "activity", "push-to-start-token", device, "--attributes-type", "Delivery"])[
                "push_to_start_token"]?.stringValue == pushToStart, "one per type")
        let list = try json(["device", "activity", "list", device])
        #expect(
            list["activities"]?.arrayValue?.count == 1
                && list["push_to_start_tokens"]?["Delivery"]?.stringValue == pushToStart)
        #expect(
            try json(["device", "activity", "set", device, "--frequent-updates", "true"])["frequent_updates"] == true)
        let id = try #require(started["id"]?.stringValue)
        let ended = try json(["device", "activity", "end", device, "--id", id])
        #expect(ended["phase"] == "ended" && ended["dismissed_at"]?.intValue != nil)

        // What cannot be: each a one-line error with its documented status.
        let (status, line) = try refused(["device", "activity", "end", device, "--id", id])
        #expect(status == 64 && line.contains("no running Live Activity"), "\(line)")
        let (badJSON, badLine) = try refused([
            "device", "activity", "start", device, "--attributes-type", "Delivery", "--attributes", "[1]",
        ])
        #expect(badJSON == 64 && badLine.contains("--attributes must be a JSON object"), "\(badLine)")
        let (badType, _) = try refused(["device", "activity", "start", device, "--attributes-type", "no spaces"])
        #expect(badType == 64)
        let (missing, missingLine) = try refused([
            "device", "activity", "start", root + "/nobody", "--attributes-type", "Delivery",
        ])
        #expect(missing == 78 && missingLine.contains("is not a device"), "\(missingLine)")
        #expect(try TestSupport.nse(["device", "set", device, "--ios-version", "17.1"]).status == 0)
        let (old, oldLine) = try refused([
            "device", "activity", "push-to-start-token", device, "--attributes-type", "Delivery",
        ])
        #expect(old == 78 && oldLine.contains("need iOS 17.2 or later; the device runs iOS 17.1"), "\(oldLine)")
        let (noChannel, channelLine) = try refused([
            "device", "activity", "start", device, "--attributes-type", "Delivery", "--channel", "Y2hhbm5lbA==",
        ])
        #expect(noChannel == 78 && channelLine.contains("iOS 18.0"), "\(channelLine)")
        #expect(try TestSupport.nse(["device", "set", device, "--ios-version", "16.0"]).status == 0)
        let (tooOld, _) = try refused(["device", "activity", "start", device, "--attributes-type", "Delivery"])
        #expect(tooOld == 78)
        let corrupt = root + "/carol"
        #expect(try TestSupport.nse(["device", "init", corrupt]).status == 0)
        try TestSupport.write("{", to: corrupt + "/live-activities.json")
        let (broken, brokenLine) = try refused(["device", "activity", "list", corrupt])
        #expect(broken == 78 && brokenLine.contains("live-activities.json"), "\(brokenLine)")
    }

    /// `nse serve` on a free port; its URL.
    func serve(_ extra: [String] = [], name: String = "serve") throws -> (CallCommandTests.Background, String) {
        let server = try CallCommandTests.Background(
            TestSupport.nse, ["serve", "--listen", "127.0.0.1:0", "--device", device] + extra, in: root, name: name)
        return (server, try server.listeningURL())
    }

    func stop(_ server: CallCommandTests.Background) {
        kill(server.process.processIdentifier, SIGTERM)
        #expect(server.wait(timeout: 5) == 0, "nse serve did not exit 0 within 5 s of SIGTERM: \(server.errors)")
    }

    /// One Live Activity push with curl over h2c; the HTTP status.
    func curlPush(_ url: String, token: String, aps: String, priority: Int = 10) throws -> String {
        try TestSupport.run(
            "/usr/bin/curl",
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--http2-prior-knowledge", "--max-time", "20",
                "-H", "apns-topic: org.example.app.push-type.liveactivity", "-H", "apns-push-type: liveactivity",
                "-H", "apns-priority: \(priority)", "--data-binary", #"{"aps":\#(aps)}"#, url + "/3/device/" + token,
            ], timeout: 30
        ).stdout
    }

    /// The results recorded for `token`'s device once there are `count` (bounded wait), newest first.
    func results(_ url: String, token: String, count: Int) throws -> [JSON] {
        var results: [JSON] = []
        let until = Date().addingTimeInterval(15)
        while Date() < until {
            let output = try TestSupport.run(
                "/usr/bin/curl", ["-sS", "--max-time", "10", "\(url)/v1/devices/\(token)/notifications"], timeout: 20)
            results = (try? JSON.parse(output.stdout, options: .init(requireObject: false)))?.arrayValue ?? []
            if results.count >= count { break }
            usleep(50_000)
        }
        return results
    }

    @Test func aProviderStartsUpdatesAndEndsAnActivityThroughServe() throws {
        let (server, url) = try serve(["--live-activity-budget", "2"])
        // The token is made while the server runs, as the app asks ActivityKit for it.
        let pushToStart = try #require(
            try json(["device", "activity", "push-to-start-token", device, "--attributes-type", "Delivery"])[
                "push_to_start_token"]?.stringValue)
        let now = Int64(Date().timeIntervalSince1970)
        let start =
            #"{"timestamp":\#(now),"event":"start","attributes-type":"Delivery","attributes":{"order":"42"},"content-state":{"eta":"12 min"},"input-push-token":1,"alert":{"title":"Order 42","body":"On its way"}}"#
        #expect(try curlPush(url, token: pushToStart, aps: start) == "200")
        let started = try #require(try results(url, token: pushToStart, count: 1).first)
        #expect(started["outcome"] == "activity-started", "\(started)")
        #expect(started["display"]?["title"] == "Order 42")
        let token = try #require(started["live_activity"]?["push_token"]?.stringValue)

        // nse push, the provider side, sends the update.
        let payload = root + "/update.json"
        try TestSupport.write(
            #"{"aps":{"timestamp":\#(now + 1),"event":"update","content-state":{"eta":"4 min"}}}"#, to: payload)
        let pushed = try TestSupport.nse([
            "push", "--url", url, "--device-token", token, "--topic", "org.example.app.push-type.liveactivity",
            "--push-type", "liveactivity", "--priority", "10", payload,
        ])
        #expect(pushed.status == 0, "\(pushed.stdout) \(pushed.stderr)")
        // The budget of 2 priority-10 updates an hour (a start is not one): the third is throttled.
        for (step, eta) in [(2, "3 min"), (3, "2 min")] {
            let aps = #"{"timestamp":\#(now + Int64(step)),"event":"update","content-state":{"eta":"\#(eta)"}}"#
            #expect(try curlPush(url, token: token, aps: aps) == "200")
        }
        let outcomes = try results(url, token: token, count: 4).compactMap { $0["outcome"]?.stringValue }
        #expect(outcomes == ["throttled", "activity-updated", "activity-updated", "activity-started"], "\(outcomes)")
        let page = try TestSupport.run("/usr/bin/curl", ["-sS", "--max-time", "10", url + "/"], timeout: 20).stdout
        #expect(page.contains("<dt>eta</dt><dd>3 min</dd>"), "the page shows the content the activity shows")
        stop(server)

        // The state outlives the server: a restarted one finds the activity's token and judges by what it shows.
        let (again, secondURL) = try serve(name: "serve-again")
        #expect(
            try curlPush(
                secondURL, token: token, aps: #"{"timestamp":\#(now),"event":"update","content-state":{"eta":"old"}}"#,
                priority: 5)
                == "200")
        #expect(
            try curlPush(
                secondURL, token: token, aps: #"{"timestamp":\#(now + 9),"event":"end","content-state":{"eta":"here"}}"#
            )
                == "200")
        let later = try results(secondURL, token: token, count: 6)
        #expect(later.prefix(2).compactMap { $0["outcome"]?.stringValue } == ["activity-ended", "activity-ignored"])
        stop(again)
        let listed = try json(["device", "activity", "list", device])
        let activity = try #require(listed["activities"]?.arrayValue?.first)
        #expect(activity["phase"] == "ended" && activity["content_state"]?["eta"] == "here")
    }
}
