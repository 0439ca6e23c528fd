import Foundation
import Logging
import NSEJSON
import NSESIP
import NSETestSupport
import Testing

/// Chat rooms with the built binaries (issue #36 §1): `nse sip-server --db` as the conference focus, `nse room` and
/// `nse send --room` as Alice's phone, Bob's phone live and Carol's asleep played by NSESIP's user agent, pushes to
/// an APNs-shaped recorder (scripts/push-recorder.py). Loopback only; every wait is bounded.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ChatRoomCommandTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-rooms") }

    static let carolToken = String(repeating: "c", count: 64)
    static let carolPush = [
        SIPParameter("pn-provider", "apns.dev"), SIPParameter("pn-prid", "\(carolToken):remote"),
        SIPParameter("pn-param", "ABCD1234.org.example.nse.remote"),
    ]

    static func phone() -> SIPUserAgent {
        var configuration = SIPUserAgentConfiguration(connectTimeout: .seconds(5))
        configuration.acceptsCalls = true
        return SIPUserAgent(
            configuration: configuration, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
    }

    static func register(_ agent: SIPUserAgent, _ name: String, proxy: SIPURI, push: [SIPParameter] = []) async throws
        -> Int
    {
        try await agent.register(
            aor: SIPURI(parsing: "sip:\(name)@example.org"), password: nil, proxy: proxy, expires: 600,
            contactURIParameters: push,
            contactHeaderParameters: [SIPParameter("+sip.instance", "\"<urn:uuid:00000000-0000-4000-8000-\(name)>\"")]
        ).statusCode
    }

    /// The first room INVITE `agent` receives, answered 200.
    static func join(_ agent: SIPUserAgent) async throws -> SIPRequest {
        let task = Task { () -> SIPRequest? in
            for await call in agent.incomingCalls {
                _ = await call.answer(contentType: nil, body: [])
                return call.invite
            }
            return nil
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            task.cancel()
        }
        defer { timeout.cancel() }
        return try #require(await task.value, "no room INVITE")
    }

    func room(_ arguments: [String], proxy: String, as name: String = "alice") throws -> TestSupport.Output {
        try TestSupport.nse(
            ["room"] + arguments + ["--proxy", proxy, "--from", "sip:\(name)@example.org", "--timeout", "10"])
    }

    @Test func aRoomFromCreationToARestart() async throws {
        let recorder = try HeldCallTests.Recorder()
        defer { recorder.stop() }
        let database = root + "/db"
        let server = try SIPServerProcess([
            "--listen", "tcp:127.0.0.1:0", "--push-url", "http://127.0.0.1:\(recorder.port)", "--db", database,
        ])
        defer { server.stop() }
        let proxy = try #require(server.uris["tcp"])
        let proxyURI = try SIPURI(parsing: proxy)
        let (bob, carol, carolAwake) = (Self.phone(), Self.phone(), Self.phone())
        // Closed before the restart below (an early failure leaves them to the process's end).
        #expect(try await Self.register(bob, "bob", proxy: proxyURI) == 200)
        #expect(try await Self.register(carol, "carol", proxy: proxyURI, push: Self.carolPush) == 200)
        await carol.close()

        // Alice creates the room: its URI printed; Bob, live, is invited at once and joins.
        let bobJoins = Task { try await Self.join(bob) }
        let created = try room(
            [
                "create", "--subject", "Trip to Lyon", "--participant", "sip:bob@example.org", "--participant",
                "sip:carol@example.org",
            ], proxy: proxy)
        #expect(created.status == 0, "\(created.stderr)")
        let uri = try #require(try JSON.parse(created.stdout)["room"]?.stringValue)
        #expect(uri.hasPrefix("sip:chatroom-") && uri.hasSuffix("@example.org"))
        #expect(server.waitFor("room_created", ["room": uri, "aor": "sip:alice@example.org"]) != nil)
        let invite = try await bobJoins.value
        #expect(invite.headers["Subject"] == "Trip to Lyon" && invite.headers["Contact"] == "<\(uri)>;isfocus")
        #expect(server.waitFor("joined", ["aor": "sip:bob@example.org"]) != nil)

        // Carol sleeps: GC_MSG with the room's user part, then the held INVITE on her REGISTER.
        let pushes = recorder.records(settle: 1)
        let invitation = try #require(pushes.first { $0["token"]?.stringValue == Self.carolToken })
        #expect(invitation["payload"]?["aps"]?["alert"]?["loc-key"]?.stringValue == "GC_MSG")
        #expect(invitation["payload"]?["chat-room-addr"]?.stringValue == String(uri.dropFirst(4).prefix { $0 != "@" }))
        let carolJoins = Task { try await Self.join(carolAwake) }
        #expect(try await Self.register(carolAwake, "carol", proxy: proxyURI, push: Self.carolPush) == 200)
        #expect(try await carolJoins.value.headers.callID == invitation["payload"]?["call-id"]?.stringValue)
        #expect(server.waitFor("joined", ["aor": "sip:carol@example.org"]) != nil)

        // Changes: by the admin, seen by `nse room show`; Bob is no admin.
        #expect(try room(["subject", uri, "Lyon, June"], proxy: proxy).status == 0)
        let refused = try room(["subject", uri, "Mine"], proxy: proxy, as: "bob")
        #expect(refused.status == 1 && refused.stderr.contains("403"))
        #expect(try room(["add", uri, "sip:dave@example.org"], proxy: proxy).status == 0)
        #expect(try room(["remove", uri, "sip:carol@example.org"], proxy: proxy).status == 0)
        let shown = try room(["show", uri], proxy: proxy)
        #expect(shown.status == 0, "\(shown.stderr)")
        let state = try JSON.parse(shown.stdout)
        #expect(state["subject"]?.stringValue == "Lyon, June")
        #expect(
            state["participants"]?.arrayValue?.compactMap { $0["aor"]?.stringValue }
                == ["sip:alice@example.org", "sip:bob@example.org", "sip:dave@example.org"])

        // A message to the room: 202 for Alice, Bob gets it From the room with Alice in the CPIM From.
        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--room", uri, "--text", "see you there",
            "--timeout", "10",
        ])
        let sentStatus = try JSON.parse(sent.stdout)["status"]?.intValue
        #expect(sent.status == 0 && sentStatus == 202, "\(sent.stderr)")
        let message = try #require(await bob.nextMessage(timeout: .seconds(10)))
        #expect(message.from?.uri.description == uri && message.contentType == "message/cpim")
        let body = String(decoding: message.body, as: UTF8.self)
        #expect(body.contains("From: <sip:alice@example.org>") && body.contains("see you there"))
        let stranger = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:eve@example.org", "--room", uri, "--text", "x", "--timeout", "10",
        ])
        let strangerStatus = try JSON.parse(stranger.stdout)["status"]?.intValue
        #expect(stranger.status == 1 && strangerStatus == 403)

        // A restart keeps the room as it was.
        for agent in [bob, carol, carolAwake] { await agent.close() }
        server.stop()
        let again = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--db", database])
        defer { again.stop() }
        let reshown = try room(["show", uri], proxy: try #require(again.uris["tcp"]))
        #expect(reshown.status == 0, "\(reshown.stderr)")
        #expect(try JSON.parse(reshown.stdout)["subject"]?.stringValue == "Lyon, June")
        #expect(try JSON.parse(reshown.stdout)["participants"]?.arrayValue?.count == 3)
    }

    @Test func badUsageIsOneLineAndExit64() throws {
        let missing = try TestSupport.nse(["send", "--proxy", "sip:127.0.0.1:1", "--from", "sip:a@b", "--text", "x"])
        #expect(missing.status == 64 && missing.stderr.contains("--to or --room"))
        let badRoom = try room(["show", "not a uri"], proxy: "sip:127.0.0.1:1")
        #expect(badRoom.status == 64 && badRoom.stderr.hasPrefix("nse: room"))
        let noServer = try TestSupport.nse([
            "room", "show", "sip:chatroom-1@example.org", "--proxy", "sip:127.0.0.1:1;transport=tcp", "--from",
            "sip:a@example.org", "--timeout", "2",
        ])
        #expect(noServer.status == 74 && noServer.stderr.hasPrefix("nse: room:"))
    }
}
