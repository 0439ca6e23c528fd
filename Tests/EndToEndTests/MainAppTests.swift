import Foundation
import NSEJSON
import NSETestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `nse app`, the main app beside its extension, with the built binaries on loopback: `nse serve` runs the
/// extension for each push `nse sip-server` sends, and the app takes the shared core, receives messages itself,
/// stops a running extension, and goes to the background. A holder killed with SIGKILL is cleared by the watchdog.
@Suite(.serialized, .timeLimit(.minutes(5))) struct MainAppTests {
    typealias Background = CallCommandTests.Background

    let root: String
    let bob: String
    init() throws {
        root = try TestSupport.temporaryDirectory("nse-main-app")
        bob = root + "/bob"
        #expect(try TestSupport.nse(["device", "init", bob]).status == 0)
    }

    /// The phone: `nse serve` for bob and `nse sip-server` pushing to it; bob registered with push parameters.
    struct Phone {
        let serve: Background
        let url: String
        let server: SIPServerProcess
        let proxy: String
        let token: String

        func stop() {
            kill(serve.process.processIdentifier, SIGTERM)
            _ = serve.wait(timeout: 5)
            server.stop()
        }
    }

    func phone(watchdog: String? = nil) throws -> Phone {
        let serve = try Background(
            TestSupport.nse, ["serve", "--listen", "127.0.0.1:0", "--device", bob], in: root, name: "serve")
        var url: String?
        let until = Date().addingTimeInterval(15)
        while url == nil, Date() < until {
            url = (try? JSON.parse(serve.output))?["listening"]?.stringValue
            if url == nil { usleep(50_000) }
        }
        let base = try #require(url, "serve did not start: \(serve.errors)")
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--push-url", base])
        let proxy = try #require(server.uris["tcp"])
        let set = try TestSupport.nse(
            ["device", "set", bob, "--sip-account", "sip:bob@127.0.0.1", "--sip-proxy", proxy]
                + (watchdog.map { ["--core-watchdog", $0] } ?? []))
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try TestSupport.nse(["device", "register", bob]).status == 0)
        let token = try #require(try JSON.parse(set.stdout)["tokens"]?["remote"]?.stringValue)
        return Phone(serve: serve, url: base, server: server, proxy: proxy, token: token)
    }

    /// Alice sends bob a sealed message; its Call-ID.
    func send(_ text: String, _ phone: Phone) throws -> String {
        let sent = try TestSupport.nse([
            "send", "--proxy", phone.proxy, "--from", "sip:alice@127.0.0.1", "--to", "sip:bob@127.0.0.1", "--text",
            text,
            "--seal-to", bob, "--display-name", "Alice",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        return try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)
    }

    /// Every result `nse serve` recorded, newest first.
    func results(_ phone: Phone) throws -> [JSON] {
        let fetched = try TestSupport.run(
            "/usr/bin/curl", ["-s", "\(phone.url)/v1/devices/\(phone.token)/notifications?limit=100"], timeout: 10)
        return (try? JSON.parse(fetched.stdout, options: JSONParseOptions(requireObject: false)))?.arrayValue ?? []
    }

    /// The result of the next push, once `nse serve` has recorded more than `seen` (waiting for it, bounded).
    func nextResult(after seen: Int, _ phone: Phone) throws -> JSON? {
        let until = Date().addingTimeInterval(20)
        while Date() < until {
            let all = try results(phone)
            if all.count > seen { return all.first }
            usleep(100_000)
        }
        return nil
    }

    /// The app's event lines so far.
    func events(_ app: Background) -> [JSON] {
        app.output.split(separator: "\n").compactMap { try? JSON.parse(String($0)) }
    }

    func waitForEvent(_ app: Background, _ name: String, timeout: TimeInterval = 15) -> JSON? {
        let until = Date().addingTimeInterval(timeout)
        while Date() < until {
            if let event = events(app).last(where: { $0["event"]?.stringValue == name }) { return event }
            usleep(50_000)
        }
        return nil
    }

    func sharedCoreState() throws -> String? {
        try JSON.parse(try TestSupport.nse(["device", "show", bob]).stdout)["shared_core"]?["state"]?.stringValue
    }

    @Test func theAppInTheForegroundReceivesTheMessageItselfThenPushesResume() throws {
        let phone = try phone()
        defer { phone.stop() }
        let app = try Background(TestSupport.nse, ["app", bob], in: root, name: "app")
        let foreground = try #require(waitForEvent(app, "registered"), "app: \(app.errors)")
        #expect(foreground["status"] == 200)
        #expect(try sharedCoreState() == "main-started")
        // A second app for the same device is refused: the main core is taken.
        let second = try TestSupport.nse(["app", bob, "--for", "1"])
        #expect(second.status == 75 && second.stderr.contains("already runs"), "\(second.stderr)")

        let inApp = try send("seen in the app", phone)
        let shown = try #require(
            waitForEvent(app, "message").flatMap { $0["call_id"]?.stringValue == inApp ? $0 : nil }, "\(app.output)")
        #expect(shown["shown"] == "in-app" && shown["source"] == "sip")
        #expect(shown["display"]?["body"] == "seen in the app" && shown["display"]?["title"] == "Alice")
        // The push for it still ran the extension, which did not show it again.
        let pushed = try #require(try nextResult(after: 0, phone))
        #expect(pushed["outcome"] == "fallback" || pushed["outcome"] == "original", "\(pushed)")
        #expect(pushed["display"]?["body"] != "seen in the app")

        // To the background: SIGTERM, exit 0 within 5 s, the core released, the binding left with push parameters.
        let stopping = Date()
        kill(app.process.processIdentifier, SIGTERM)
        #expect(app.wait(timeout: 5) == 0, "\(app.errors)")
        #expect(Date().timeIntervalSince(stopping) < 5)
        #expect(events(app).last?["event"] == "background" && events(app).last?["register_status"] == 200)
        #expect(try sharedCoreState() == "none")
        _ = try send("shown by the push", phone)
        let rewritten = try #require(try nextResult(after: 1, phone))
        #expect(rewritten["outcome"] == "rewritten" && rewritten["display"]?["body"] == "shown by the push")
    }

    @Test func anExtensionMidFetchIsStoppedWhenTheAppComesToTheForeground() throws {
        let phone = try phone()
        defer { phone.stop() }
        // A push whose message never comes: the extension holds the core and waits for it.
        let payload = root + "/never.json"
        try TestSupport.write(
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"never@127.0.0.1"}"#,
            to: payload)
        let pushed = try TestSupport.nse(["push", "--url", phone.url, "--device", bob, payload])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let until = Date().addingTimeInterval(15)
        while try sharedCoreState() != "executor-started", Date() < until { usleep(50_000) }
        #expect(try sharedCoreState() == "executor-started")

        let app = try Background(TestSupport.nse, ["app", bob, "--for", "2"], in: root, name: "app-mid-fetch")
        #expect(app.wait(timeout: 10) == 0, "\(app.errors)")
        let foreground = try #require(events(app).first { $0["event"] == "foreground" }, "\(app.output)")
        // The extension stopped when asked, well before the 3 s the app would wait.
        #expect(foreground["stopped_extensions"] == 1 && foreground["forced"] == false, "\(foreground)")
        #expect((foreground["waited_ms"]?.doubleValue ?? 9999) < 3000)
        let stopped = try #require(try nextResult(after: 0, phone))
        #expect(stopped["extension"]?["info"]?["shared_core"] == "executor-stopped", "\(stopped)")
        #expect(stopped["outcome"] == "original" && stopped["extension"]?["wall_ms"]?.doubleValue ?? 99999 < 10000)
    }

    @Test func aKilledAppIsClearedByTheWatchdog() throws {
        let phone = try phone(watchdog: "2")
        defer { phone.stop() }
        let app = try Background(TestSupport.nse, ["app", bob], in: root, name: "app-killed")
        #expect(waitForEvent(app, "registered") != nil, "\(app.errors)")
        // Killed: nothing releases the core; its claim stays until the watchdog clears it.
        kill(app.process.processIdentifier, SIGKILL)
        _ = app.wait(timeout: 5)
        #expect(try sharedCoreState() == "main-started")
        let callID = try send("after the crash", phone)
        let blocked = try #require(try nextResult(after: 0, phone))
        #expect(blocked["extension"]?["info"]?["shared_core"] == "main-core-running", "\(blocked)")
        #expect(blocked["outcome"] == "original")
        // 2 s without a heartbeat: the claim is gone, and the next push for the message fetches it.
        usleep(2_200_000)
        #expect(try sharedCoreState() == "none")
        let payload = root + "/again.json"
        try TestSupport.write(
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"\#(callID)"}"#,
            to: payload)
        #expect(try TestSupport.nse(["push", "--url", phone.url, "--device", bob, payload]).status == 0)
        let fetched = try #require(try nextResult(after: 1, phone))
        #expect(fetched["outcome"] == "rewritten", "\(fetched)")
        #expect(fetched["display"]?["body"] == "after the crash")
    }

    @Test func badUsageIsOneLine() throws {
        let noAccount = try TestSupport.nse(["app", bob, "--for", "1"])
        #expect(noAccount.status == 78 && noAccount.stderr.contains("has no SIP account"), "\(noAccount.stderr)")
        let badFor = try TestSupport.nse(["app", bob, "--for", "0"])
        #expect(badFor.status == 64 && badFor.stderr.contains("--for must be more than 0"), "\(badFor.stderr)")
        let badWatchdog = try TestSupport.nse(["device", "set", bob, "--core-watchdog", "0.5"])
        #expect(badWatchdog.status == 64 && badWatchdog.stderr.contains("--core-watchdog"), "\(badWatchdog.stderr)")
    }
}
