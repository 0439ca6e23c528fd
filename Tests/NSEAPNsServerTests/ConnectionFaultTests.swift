import Foundation
import NIOCore
import NIOHPACK
import NSEAPNsServer
import NSEJSON
import NSETestSupport
import Testing

/// Fault rules about connections (docs/serve.md, "Fault injection"): a late accept, a late SETTINGS frame and a cap
/// on a provider's connections, over real connections to the `nse serve` binary.
@Suite struct ConnectionFaultTests {
    let headers = [("apns-topic", "org.example.app"), ("apns-push-type", "alert")]

    @Test func connectionRulesParseAndRefuseWhatMakesNoSense() throws {
        #expect(try FaultRule(spec: "connect_delay=1.5,count=2", now: 0).connection == .connectDelay(1.5))
        #expect(try FaultRule(spec: "connect_delay=1.5,count=2", now: 0).count == 2)
        #expect(try FaultRule(spec: "settings_delay=2", now: 0).connection == .settingsDelay(2))
        let cap = try FaultRule(spec: "max_connections=3", now: 0)
        #expect(cap.connection == .maxConnections(3))
        #expect(cap.uses == nil)
        #expect(try FaultRule(json: cap.json, now: 0) == cap)
        let delay = try FaultRule(spec: "settings_delay=0.5,count=4", now: 0)
        #expect(try FaultRule(json: delay.json, now: 0) == delay)
        for spec in [
            "connect_delay=0", "connect_delay=301", "settings_delay=soon", "max_connections=0",
            "max_connections=2,count=3", "max_connections=2,status=429", "connect_delay=1,token=ab",
            "connect_delay=1,settings_delay=1", "max_connections=1,goaway",
        ] {
            #expect(throws: FaultRule.Invalid.self, "\(spec)") { try FaultRule(spec: spec, now: 0) }
        }
        // A cap is listed without a count and stays; push rules skip connection rules.
        let plan = APNsFaultPlan(rules: [cap, try FaultRule(spec: "status=429", now: 0)])
        #expect(plan.json["rules"]?.arrayValue?.first?["remaining"] == .null)
        #expect(plan.take(token: "ab")?.rule.answer?.status == 429)
        #expect(plan.connectionCap?.cap == 3)
        #expect(plan.takeConnectDelay() == nil)
        #expect(plan.entries.count == 1)
    }

    /// `max_connections=1`: a second connection of the same provider (here: the same address, no provider token)
    /// gets GOAWAY(ENHANCE_YOUR_CALM) naming no stream taken and is closed; its push is not recorded. Once the first
    /// connection closes, a new one is served.
    @Test func aProviderPastItsConnectionCapIsTurnedAway() async throws {
        let fixture = try ServedDevice("nse-serve-max-connections")
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", fixture.root + "/bob", "--fault", "max_connections=1",
        ])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let first = try Session(port: port)
        #expect(try exchange(first, stream: 1, token: fixture.token).status == "200")
        let second = try Session(port: port)
        let turnedAway = try exchange(second, stream: 1, token: fixture.token)
        let goAway = try #require(turnedAway.goAway)
        #expect(goAway.word(at: 0) == 0)  // last stream taken: none, so the push is safe to retry
        #expect(goAway.word(at: 4) == 0xb)  // ENHANCE_YOUR_CALM
        #expect(String(decoding: goAway.payload.dropFirst(8), as: UTF8.self) == #"{"reason":"TooManyConnections"}"#)
        #expect(turnedAway.status == nil)
        #expect(second.connection.closedByServer(within: 5))
        // The first connection still carries pushes.
        #expect(try exchange(first, stream: 3, token: fixture.token).status == "200")
        // A closed connection no longer counts.
        first.connection.halfClose()
        #expect(first.connection.closedByServer(within: 5))
        var served = false
        for attempt in 0..<50 where !served {
            if attempt > 0 { usleep(100_000) }
            served = try exchange(try Session(port: port), stream: 1, token: fixture.token).status == "200"
        }
        #expect(served)
        let log = try await fetchJSON(server.url + "/v1/requests")
        let refused = log.arrayValue?.filter { $0["reason"]?.stringValue == "TooManyConnections" } ?? []
        #expect(refused.count >= 1)
        #expect(refused.first?["goaway"]?.boolValue == true)
        #expect(refused.first?["fault"]?.intValue == 1)
        #expect(server.stop() == 0)
        #expect(try recordedResults(fixture.root + "/bob").count == 3)
    }

    /// `settings_delay`: the server's SETTINGS frame (and so its answers) come no sooner than the delay; the push is
    /// then answered as usual and the rule is used up.
    @Test func aSettingsDelayHoldsTheServersSettingsBack() async throws {
        let fixture = try ServedDevice("nse-serve-settings-delay")
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", fixture.root + "/bob", "--fault", "settings_delay=1.5",
        ])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let session = try Session(port: port)
        let started = Date()
        let answer = try exchange(session, stream: 1, token: fixture.token)
        let firstSettings = try #require(answer.firstFrameAt)
        #expect(firstSettings.timeIntervalSince(started) >= 1.4)
        #expect(answer.status == "200")
        let rules = try await fetchJSON(server.url + "/v1/control/faults")
        #expect(rules["rules"]?.arrayValue?.isEmpty == true)
        #expect(server.stop() == 0)
    }

    /// `connect_delay`: nothing is read for the delay, then the connection is served.
    @Test func aConnectDelayLeavesTheConnectionUnreadForAWhile() async throws {
        let fixture = try ServedDevice("nse-serve-connect-delay")
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", fixture.root + "/bob", "--fault", "connect_delay=1.5",
        ])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let session = try Session(port: port)
        let started = Date()
        let answer = try exchange(session, stream: 1, token: fixture.token)
        let firstBytes = try #require(answer.firstFrameAt)
        #expect(firstBytes.timeIntervalSince(started) >= 1.4)
        #expect(answer.status == "200")
        #expect(server.stop() == 0)
    }

    /// A connection held by a long `settings_delay` does not hold the server: SIGTERM still ends it at once.
    @Test func sigtermDoesNotWaitForADelayedConnection() async throws {
        let fixture = try ServedDevice("nse-serve-delay-sigterm")
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", fixture.root + "/bob", "--fault", "settings_delay=120",
            "--fault", "connect_delay=120",
        ])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let unread = try RawConnection(port: port)
        let held = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        held.send(
            H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
                + (try H2Frame.post(
                    stream: 1, path: "/3/device/\(fixture.token)", headers: headers,
                    body: Array(alertPayload.utf8), encoder: &encoder)))
        usleep(300_000)
        let stopping = Date()
        #expect(server.stop() == 0)
        #expect(Date().timeIntervalSince(stopping) < 5)
        withExtendedLifetime((unread, held)) {}
    }

    /// What one push on a raw HTTP/2 connection got: its `:status`, a GOAWAY, and when the server's first frame came.
    struct Exchange {
        var status: String?
        var goAway: H2Frame?
        var firstFrameAt: Date?
    }

    /// A raw HTTP/2 connection with its HPACK state, which lasts as long as the connection.
    final class Session {
        let connection: RawConnection
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var reader = H2FrameReader()
        var started = false

        init(port: Int) throws { connection = try RawConnection(port: port) }
    }

    /// Sends (after the preface and SETTINGS the first time) one push on `stream`, and reads until its answer, a
    /// GOAWAY or 20 s.
    func exchange(_ session: Session, stream: UInt32, token: String) throws -> Exchange {
        var bytes =
            session.started
            ? [] : H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
        session.started = true
        bytes += try H2Frame.post(
            stream: stream, path: "/3/device/\(token)", headers: headers, body: Array(alertPayload.utf8),
            encoder: &session.encoder)
        session.connection.send(bytes)
        var result = Exchange()
        let deadline = Date().addingTimeInterval(20)
        while result.status == nil, result.goAway == nil, Date() < deadline {
            guard let read = session.connection.read(timeout: 2) else { break }
            if !read.isEmpty, result.firstFrameAt == nil { result.firstFrameAt = Date() }
            for frame in session.reader.feed(read) {
                if frame.type == H2Frame.goAway { result.goAway = frame }
                if frame.type == H2Frame.headers, frame.stream == stream {
                    var block = ByteBuffer(bytes: frame.payload)
                    result.status = try session.decoder.decodeHeaders(from: &block).first(name: ":status")
                }
            }
        }
        return result
    }

    func fetchJSON(_ url: String) async throws -> JSON {
        let output = try await runOffPool("/usr/bin/curl", ["-sS", "--max-time", "20", url], timeout: 30)
        return try JSON.parse(Array(output.stdout.utf8), options: JSONParseOptions(requireObject: false))
    }
}
