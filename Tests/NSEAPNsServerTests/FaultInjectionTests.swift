import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHPACK
import NSEAPNsServer
import NSEJSON
import NSETestSupport
import Testing

/// Scripted answers, the unavailable switch and the request log (docs/serve.md, "Fault injection"), through the
/// router; the GOAWAY fault over a real HTTP/2 connection to the `nse serve` binary.
@Suite struct FaultInjectionTests {
    let headers = [("apns-topic", "org.example.app"), ("apns-push-type", "alert")]

    func push(_ client: some TestClientProtocol, _ token: String, extra: [(String, String)] = []) async throws -> (
        status: Int, reason: String?, body: JSON?
    ) {
        try await client.execute(
            uri: "/3/device/\(token)", method: .post, headers: fields(headers + extra),
            body: ByteBuffer(string: alertPayload)
        ) { response in
            (response.status.code, reason(response), try? JSON.parse(Array(response.body.readableBytesView)))
        }
    }

    func control(
        _ client: some TestClientProtocol, _ path: String, _ method: HTTPRequest.Method, _ body: String? = nil
    ) async throws -> (status: Int, body: JSON?) {
        try await client.execute(uri: path, method: method, body: body.map { ByteBuffer(string: $0) }) { response in
            (
                response.status.code,
                try? JSON.parse(Array(response.body.readableBytesView), options: JSONParseOptions(requireObject: false))
            )
        }
    }

    @Test func scriptedAnswersAreUsedInOrderThenTheServerAnswersAsUsual() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client in
            let added = try await control(
                client, "/v1/control/faults", .post, #"[{"status":429,"count":2},{"status":500}]"#)
            #expect(added.status == 201)
            #expect(added.body?.arrayValue?.count == 2)
            #expect(try await push(client, fixture.remote).reason == "TooManyRequests")
            #expect(try await push(client, fixture.remote).status == 429)
            let third = try await push(client, fixture.remote)
            #expect(third.status == 500 && third.reason == "InternalServerError")
            #expect(try await push(client, fixture.remote).status == 200)
            let left = try await control(client, "/v1/control/faults", .get)
            #expect(left.body?["rules"]?.arrayValue?.isEmpty == true)
        }
        try await fixture.settle()
        // Only the push that got its 200 was recorded and delivered.
        #expect(try await fixture.service.results(for: fixture.device, limit: 10, since: 0).count == 1)
    }

    @Test func aRuleForOneTokenLeavesTheOthersAlone() async throws {
        let fixture = try ServerFixture()
        let stamp: Int64 = 1_700_000_000_000
        fixture.service.faults.add(
            try FaultRule(spec: "token=\(fixture.remote.uppercased()),status=410,timestamp=\(stamp)", now: 0))
        try await fixture.app.test(.router) { client in
            let voip = try await client.execute(
                uri: "/3/device/\(fixture.voip)", method: .post,
                headers: fields([("apns-topic", "org.example.app.voip"), ("apns-push-type", "voip")]),
                body: ByteBuffer(string: alertPayload)
            ) { $0.status.code }
            #expect(voip == 200)
            let gone = try await push(client, fixture.remote)
            #expect(gone.status == 410 && gone.reason == "Unregistered")
            #expect(gone.body?["timestamp"]?.intValue == stamp)
            #expect(try await push(client, fixture.remote).status == 200)
        }
        try await fixture.settle()
    }

    @Test func unavailableAnswers503UntilBackAndADelayStillAccepts() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client in
            #expect(try await control(client, "/v1/control/unavailable", .put).status == 204)
            let refused = try await push(client, fixture.remote)
            #expect(refused.status == 503 && refused.reason == "Shutdown")
            #expect(
                try await control(client, "/v1/control/unavailable", .put, #"{"reason":"ServiceUnavailable"}"#).status
                    == 204)
            #expect(try await push(client, fixture.remote).reason == "ServiceUnavailable")
            let listed = try await control(client, "/v1/control/faults", .get)
            #expect(listed.body?["unavailable"]?.stringValue == "ServiceUnavailable")
            #expect(try await control(client, "/v1/control/unavailable", .delete).status == 204)
            let delayed = try await control(client, "/v1/control/faults", .post, #"{"delay":0.2}"#)
            #expect(delayed.status == 201)
            let started = ContinuousClock.now
            #expect(try await push(client, fixture.remote).status == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(200))
        }
        try await fixture.settle()
    }

    @Test func badRulesAreRefusedWithTheFieldNamed() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client in
            for (body, words) in [
                (#"{"status":418}"#, "fault status"), (#"{"status":400}"#, "needs a reason"),
                (#"{"count":0,"status":429}"#, "fault count"), (#"{"token":"xyz","status":429}"#, "fault token"),
                (#"{"colour":"red"}"#, "unknown fault field \"colour\""), (#"{"count":2}"#, "needs a status"),
                (#"{"status":429,"goaway":true}"#, "not both"), (#"{"status":500,"timestamp":5}"#, "410"),
                ("not json", "JSON"),
            ] {
                let answer = try await control(client, "/v1/control/faults", .post, body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.body?["reason"]?.stringValue == "BadFault")
                #expect(
                    answer.body?["detail"]?.stringValue?.contains(words) == true, "\(body): \(answer.body ?? .null)")
            }
            let added = try await control(client, "/v1/control/faults", .post, #"{"status":429,"count":5}"#)
            let id = try #require(added.body?["id"]?.intValue)
            #expect(try await control(client, "/v1/control/faults/\(id)", .delete).status == 204)
            #expect(try await control(client, "/v1/control/faults/\(id)", .delete).status == 404)
            #expect(try await push(client, fixture.remote).status == 200)
            #expect(try await control(client, "/v1/control/faults", .patch).status == 405)
        }
        #expect(throws: FaultRule.Invalid.self) { try FaultRule(spec: "status", now: 0) }
        #expect(throws: FaultRule.Invalid.self) { try FaultRule(spec: "delay=soon", now: 0) }
        #expect(try FaultRule(spec: "goaway,count=2", now: 0) == FaultRule(goAway: true, count: 2))
        try await fixture.settle()
    }

    @Test func theRequestLogKeepsEveryRequestWithoutCredentialsOrContent() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client in
            _ = try await control(client, "/v1/control/faults", .post, #"{"status":429}"#)
            _ = try await push(client, fixture.remote, extra: [("authorization", "bearer eyJhbGciOi.secret.sig")])
            _ = try await push(client, fixture.remote, extra: [("apns-id", "00000000-0000-4000-8000-000000000001")])
            _ = try await push(client, "00ff")
            let all = try await control(client, "/v1/requests", .get)
            let entries = try #require(all.body?.arrayValue)
            #expect(entries.count == 3)
            // Newest first.
            #expect(entries.map { $0["status"]?.intValue } == [400, 200, 429])
            #expect(entries[0]["reason"]?.stringValue == "BadDeviceToken")
            #expect(entries[1]["apns_id"]?.stringValue == "00000000-0000-4000-8000-000000000001")
            #expect(entries[1]["apns_unique_id"]?.stringValue?.count == 36)
            #expect(entries[1]["payload_bytes"]?.intValue == Int64(alertPayload.utf8.count))
            #expect(entries[2]["fault"]?.intValue == 1)
            #expect(entries[2]["auth"]?.stringValue == "token")
            #expect(entries[2]["headers"]?["authorization"]?.stringValue == "bearer (redacted)")
            #expect(!all.body!.serialized().contains("secret"))
            #expect(!all.body!.serialized().contains("there"))  // the payload's text
            let mine = try await control(client, "/v1/requests?token=\(fixture.remote.uppercased())&limit=1", .get)
            #expect(mine.body?.arrayValue?.map { $0["status"]?.intValue } == [200])
            let byTopic = try await control(client, "/v1/requests?topic=org.example.app.voip", .get)
            #expect(byTopic.body?.arrayValue?.isEmpty == true)
            #expect(try await control(client, "/v1/requests", .delete).status == 204)
            #expect(try await control(client, "/v1/requests", .get).body?.arrayValue?.isEmpty == true)
        }
        try await fixture.settle()
        let log = RequestLog(capacity: 2)
        for token in ["01", "02", "03"] {
            log.record(
                RequestLog.Entry(receivedAt: 0, token: token, headers: [], authentication: "none", httpVersion: "2"))
        }
        #expect(log.entries().map(\.token) == ["03", "02"])
        #expect(log.entries(since: 2).map(\.token) == ["03"])
        #expect(log.dropped == 1)
    }

    /// APNs sends `apns-unique-id` only in development (sandbox); `?unique_id=` finds the request that got one.
    @Test(arguments: ProviderCertificate.Environment.allCases)
    func theUniqueIDIsSentInDevelopmentOnlyAndFindsItsRequest(environment: ProviderCertificate.Environment)
        async throws
    {
        let fixture = try ServerFixture(environment: environment)
        try await fixture.app.test(.router) { client in
            _ = try await push(client, fixture.remote)
            let uniqueID = try await client.execute(
                uri: "/3/device/\(fixture.remote)", method: .post, headers: fields(headers),
                body: ByteBuffer(string: alertPayload)
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.init("apns-id")!] != nil)
                return response.headers[.init("apns-unique-id")!]
            }
            let logged = try #require(try await control(client, "/v1/requests", .get).body?.arrayValue)
            #expect(logged.count == 2)
            switch environment {
            case .development:
                let sent = try #require(uniqueID)
                #expect(APNsValidation.isUUID(sent))
                let found = try await control(client, "/v1/requests?unique_id=\(sent.uppercased())", .get)
                #expect(found.body?.arrayValue?.map { $0["id"]?.intValue } == [logged[0]["id"]?.intValue])
                #expect(found.body?.arrayValue?.first?["apns_unique_id"]?.stringValue == sent)
            case .production:
                #expect(uniqueID == nil)
                #expect(logged.allSatisfy { $0["apns_unique_id"] == .null })
            }
            let unknown = try await control(client, "/v1/requests?unique_id=\(PushService.newAPNsID())", .get)
            #expect(unknown.status == 200 && unknown.body?.arrayValue?.isEmpty == true)
            let bad = try await control(client, "/v1/requests?unique_id=nope", .get)
            #expect(bad.status == 400 && bad.body?["reason"]?.stringValue == "BadUniqueId")
        }
        try await fixture.settle()
        // Delivered alike: the header is the only difference.
        #expect(try await fixture.service.results(for: fixture.device, limit: 10, since: 0).count == 2)
    }

    /// `rst_stream` and `empty_body` in both forms, and the combinations that make no sense refused.
    @Test func streamResetAndEmptyBodyRulesAreParsedAndChecked() throws {
        #expect(try FaultRule(spec: "rst_stream,count=2", now: 0) == FaultRule(count: 2, resetStream: true))
        let empty = try FaultRule(spec: "status=500,empty_body", now: 0)
        #expect(empty.emptyBody && empty.answer?.status == 500)
        #expect(try FaultRule(json: empty.json, now: 0) == empty)
        #expect(try FaultRule(json: ["rst_stream": true], now: 0).json["rst_stream"]?.boolValue == true)
        for spec in [
            "empty_body", "rst_stream,goaway", "rst_stream,status=429", "rst_stream=yes", "empty_body,goaway",
        ] {
            #expect(throws: FaultRule.Invalid.self, "\(spec)") { try FaultRule(spec: spec, now: 0) }
        }
    }

    @Test func anEmptyBodyAnswerHasItsStatusAndNoBody() async throws {
        let fixture = try ServerFixture()
        _ = fixture.service.faults.add(FaultRule(answer: APNsError(503, "ServiceUnavailable"), emptyBody: true))
        try await fixture.app.test(.router) { client in
            try await client.execute(
                uri: "/3/device/\(fixture.remote)", method: .post, headers: fields(headers),
                body: ByteBuffer(string: alertPayload)
            ) { response in
                #expect(response.status.code == 503)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.init("apns-id")!] != nil)
            }
            let logged = try await control(client, "/v1/requests", .get).body?.arrayValue?.first
            #expect(logged?["status"]?.intValue == 503 && logged?["fault"]?.intValue == 1)
            #expect(try await push(client, fixture.remote).status == 200)
        }
        try await fixture.settle()
        #expect(try await fixture.service.results(for: fixture.device, limit: 10, since: 0).count == 1)
    }

    @Test func aMalformedBodyAnswerHasItsStatusAndABodyThatIsNotJSON() async throws {
        let fixture = try ServerFixture()
        var rule = FaultRule(answer: APNsError(500, "InternalServerError"))
        rule.malformedBody = true
        _ = fixture.service.faults.add(rule)
        try await fixture.app.test(.router) { client in
            try await client.execute(
                uri: "/3/device/\(fixture.remote)", method: .post, headers: fields(headers),
                body: ByteBuffer(string: alertPayload)
            ) { response in
                #expect(response.status.code == 500)
                let body = String(buffer: response.body)
                #expect(body == #"{"reason":"Int"#)
                #expect((try? JSON.parse(body)) == nil)
            }
            #expect(try await push(client, fixture.remote).status == 200)
        }
        #expect(throws: FaultRule.Invalid.self) { try FaultRule(spec: "malformed_body", now: 0) }
        #expect(throws: FaultRule.Invalid.self) { try FaultRule(spec: "status=500,empty_body,malformed_body", now: 0) }
        #expect(try FaultRule(spec: "status=503,malformed_body", now: 0).json["malformed_body"] == true)
        try await fixture.settle()
    }

    /// `rst_stream` over a real HTTP/2 connection: that push's stream alone gets RST_STREAM(INTERNAL_ERROR), the
    /// next push on the same connection its 200; the reset push is logged without a status and never recorded.
    @Test func aStreamResetFaultResetsThatStreamOnly() async throws {
        let fixture = try ServerFixture()
        let server = try await InProcessServer(
            PushServerConfiguration(host: "127.0.0.1", port: 0), device: fixture.device)
        _ = server.service.faults.add(FaultRule(resetStream: true))
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var bytes = H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
        for stream: UInt32 in [1, 3] {
            bytes += try H2Frame.post(
                stream: stream, path: "/3/device/\(fixture.remote)", headers: headers, body: Array(alertPayload.utf8),
                encoder: &encoder)
        }
        connection.send(bytes)
        var reader = H2FrameReader()
        var outcomes: [UInt32: String] = [:]
        let deadline = Date().addingTimeInterval(20)
        while outcomes.count < 2, Date() < deadline, let read = connection.read(timeout: 2) {
            for frame in reader.feed(read) {
                switch frame.type {
                case H2Frame.headers:
                    var block = ByteBuffer(bytes: frame.payload)
                    outcomes[frame.stream] = try decoder.decodeHeaders(from: &block).first(name: ":status")
                case H2Frame.rstStream: outcomes[frame.stream] = "RST \(frame.word(at: 0))"
                case H2Frame.goAway: outcomes[0] = "GOAWAY"
                default: break
                }
            }
        }
        #expect(outcomes == [1: "RST 2", 3: "200"])
        // Each stream is logged as it ends, the reset one maybe after the client saw both (a bounded wait).
        var logged = server.service.requests.entries().map(\.json)
        for _ in 0..<100 where logged.count < 2 {
            try await Task.sleep(nanoseconds: 50_000_000)
            logged = server.service.requests.entries().map(\.json)
        }
        #expect(logged.compactMap { $0["rst_stream"]?.boolValue }.sorted { !$0 && $1 } == [false, true])
        let reset = logged.first { $0["rst_stream"]?.boolValue == true }
        #expect(reset?["status"] == .null && reset?["goaway"]?.boolValue == false)
        await server.stop()
        #expect(try server.service.store.results(for: fixture.device, limit: 10).count == 1)
    }

    /// `--fault goaway`: the HTTP/2 connection gets GOAWAY naming no stream as taken, with APNs's reason as debug
    /// data, and is closed; the push is not recorded; the next connection is served.
    @Test func goAwayClosesTheConnectionAndThePushIsNotTaken() async throws {
        let fixture = try ServedDevice("nse-serve-goaway")
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", fixture.root + "/bob", "--fault", "goaway,reason=Shutdown",
        ])
        defer { server.stop() }
        let port = try #require(Int(server.url.split(separator: ":").last ?? ""))
        let connection = try RawConnection(port: port)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        connection.send(
            H2Frame.preface + H2Frame(type: H2Frame.settings, flags: 0, stream: 0, payload: []).bytes
                + (try H2Frame.post(
                    stream: 1, path: "/3/device/\(fixture.token)", headers: [("apns-topic", "org.example.app")],
                    body: Array(alertPayload.utf8), encoder: &encoder)))
        var reader = H2FrameReader()
        var goAway: H2Frame?
        var answered = false
        let deadline = Date().addingTimeInterval(20)
        reading: while Date() < deadline {
            guard let bytes = connection.read(timeout: 5) else { break }
            for frame in reader.feed(bytes) {
                if frame.type == H2Frame.goAway { goAway = frame }
                if frame.type == H2Frame.headers && frame.stream == 1 { answered = true }
            }
            if goAway != nil && connection.closedByServer(within: 5) { break reading }
        }
        let frame = try #require(goAway)
        #expect(frame.word(at: 0) == 0)  // last stream taken: none
        #expect(String(decoding: frame.payload.dropFirst(8), as: UTF8.self) == #"{"reason":"Shutdown"}"#)
        #expect(!answered)
        #expect(try await fixture.push(to: server.url, apnsID: "00000000-0000-4000-8000-000000000002") == "200")
        #expect(server.stop() == 0)
        #expect(try recordedResults(fixture.root + "/bob").count == 1)
    }
}
