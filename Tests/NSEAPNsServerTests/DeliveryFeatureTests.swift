import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NSEAPNsServer
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSETestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A program whose stdout is read as it arrives (an SSE client), killed when the test is done with it.
final class StreamingProcess: @unchecked Sendable {
    let process = Process()
    private let buffer = Mutex("")

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        DispatchQueue.global().async { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                self.buffer.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    var text: String { buffer.withLock { $0 } }

    /// Waits (bounded) until `condition` holds for what was read so far.
    func wait(seconds: Double = 30, until condition: (String) -> Bool) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(text) { return text }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return text
    }

    /// Waits (bounded) for the program to end on its own; kills it otherwise. Whether it ended on its own.
    func waitForExit(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        let ended = !process.isRunning
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return ended
    }
}

/// The `data:` lines of `event: notification` events in an event stream.
func notificationEvents(_ text: String) -> [JSON] {
    text.components(separatedBy: "\n\n").compactMap { block -> JSON? in
        let lines = block.split(separator: "\n").map(String.init)
        guard lines.contains("event: notification"), let data = lines.first(where: { $0.hasPrefix("data: ") }) else {
            return nil
        }
        return try? JSON.parse(String(data.dropFirst(6)))
    }
}

@Suite(.serialized) struct DeliveryFeatureTests {
    /// One push through the router; status, the JSON body and apns-id.
    func send(
        _ fixture: ServerFixture, headers: [(String, String)] = [], token: String? = nil,
        topic: String = "org.example.app",
        pushType: String = "alert"
    ) async throws -> (status: Int, body: JSON?, apnsID: String?) {
        let app = Application(responder: PushResponder(service: fixture.service))
        return try await app.test(.router) { client in
            try await client.execute(
                uri: "/3/device/\(token ?? fixture.remote)", method: .post,
                headers: fields([("apns-topic", topic), ("apns-push-type", pushType)] + headers),
                body: ByteBuffer(string: alertPayload)
            ) { response in
                (
                    Int(response.status.code), try? JSON.parse(Array(response.body.readableBytesView)),
                    response.headers[.init("apns-id")!]
                )
            }
        }
    }

    @Test func anUninstalledAppIsUnregisteredWithItsTimestampUntilReinstalled() async throws {
        let fixture = try ServerFixture()
        #expect(try await send(fixture).status == 200)
        // `nse device set --uninstalled` while the server runs: the next push sees it.
        var device = try Device.open(at: fixture.device.directory)
        device.config.uninstalledAt = 1_763_700_000_123
        try device.save()
        let gone = try await send(fixture)
        #expect(gone.status == 410)
        #expect(gone.body?["reason"]?.stringValue == "Unregistered")
        #expect(gone.body?["timestamp"]?.intValue == 1_763_700_000_123)
        let voip = try await send(fixture, token: fixture.voip, topic: "org.example.app.voip", pushType: "voip")
        #expect(voip.status == 410, "both of the app's tokens are gone: \(voip.body?.serialized() ?? "")")
        device.config.uninstalledAt = nil
        try device.save()
        #expect(try await send(fixture).status == 200)
        try await fixture.settle()
        #expect(try fixture.service.store.results(for: fixture.device, limit: 10).count == 2)
    }

    @Test func aPushPastItsExpirationIsAcceptedAndDroppedUndelivered() async throws {
        let fixture = try ServerFixture()
        let now = Int64(Date().timeIntervalSince1970)
        let expired = try await send(
            fixture, headers: [("apns-expiration", "\(now - 60)"), ("apns-collapse-id", "thread-1")])
        #expect(expired.status == 200)
        let once = try await send(fixture, headers: [("apns-expiration", "0")])
        let later = try await send(fixture, headers: [("apns-expiration", "\(now + 3600)")])
        #expect(once.status == 200 && later.status == 200)
        try await fixture.settle()
        let results = try fixture.service.store.results(for: fixture.device, limit: 10)
        func outcome(_ id: String?) -> String? {
            results.first { $0["apns_id"]?.stringValue == id }?["outcome"]?.stringValue
        }
        #expect(outcome(expired.apnsID) == "expired")
        #expect(
            results.first { $0["apns_id"]?.stringValue == expired.apnsID }?["collapse_id"]?.stringValue == "thread-1")
        #expect(outcome(once.apnsID) == "not-invoked")
        #expect(outcome(later.apnsID) == "not-invoked")
        for result in results {
            #expect((result["latency_ms"]?.doubleValue ?? -1) >= 0)
            #expect((result["recorded_at"]?.intValue ?? 0) >= (result["received_at"]?.intValue ?? .max))
        }
    }

    @Test func aStoppingServerAnswersShutdown() async throws {
        let fixture = try ServerFixture()
        #expect(try await send(fixture).status == 200)
        await fixture.service.drain()
        let late = try await send(fixture)
        #expect(late.status == 503 && late.body?["reason"]?.stringValue == "Shutdown")
        #expect(try fixture.service.store.results(for: fixture.device, limit: 10).count == 1)
    }

    @Test func devicesAreListed() async throws {
        let fixture = try ServerFixture()
        let app = Application(responder: PushResponder(service: fixture.service))
        let listed = try await app.test(.router) { client in
            try await client.execute(uri: "/v1/devices", method: .get) {
                try? JSON.parse(Array($0.body.readableBytesView), options: .init(requireObject: false))
            }
        }
        #expect(listed?.arrayValue?.count == 1)
        #expect(listed?.arrayValue?.first?["remote_token"]?.stringValue == fixture.remote)
        #expect(listed?.arrayValue?.first?["voip_token"]?.stringValue == fixture.voip)
    }

    /// A receiver for callbacks: answers `statuses` in turn (then 200) and keeps every body.
    final class CallbackReceiver: Sendable {
        let bodies = Mutex<[JSON]>([])
        let headers = Mutex<[String]>([])
        let statuses: Mutex<[Int]>

        init(statuses: [Int] = []) { self.statuses = Mutex(statuses) }

        var router: Router<BasicRequestContext> {
            let router = Router()
            router.post("/results") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                if let json = try? JSON.parse(Array(body.readableBytesView)) {
                    self.bodies.withLock { $0.append(json) }
                }
                self.headers.withLock { $0.append(request.headers[.init("apns-id")!] ?? "") }
                let status = self.statuses.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
                return Response(status: .init(code: status))
            }
            return router
        }
    }

    @Test func resultsArePostedToTheDevicesCallbackAndRetriedOnServerErrors() async throws {
        let receiver = CallbackReceiver(statuses: [503])
        let receiverApp = Application(router: receiver.router)
        try await receiverApp.test(.live) { client in
            let fixture = try ServerFixture()
            var device = try Device.open(at: fixture.device.directory)
            device.config.callbackURL = "http://127.0.0.1:\(client.port ?? 0)/results"
            try device.save()
            let answer = try await send(fixture)
            #expect(answer.status == 200)
            try await fixture.settle()
            for _ in 0..<500 where receiver.headers.withLock({ $0.count }) < 2 {
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            await fixture.service.drain()
            // 503 once, then delivered: two attempts, both with the result and its apns-id.
            #expect(receiver.headers.withLock { $0 } == [answer.apnsID ?? "", answer.apnsID ?? ""])
            let bodies = receiver.bodies.withLock { $0 }
            #expect(bodies.count == 2)
            #expect(bodies.last?["apns_id"]?.stringValue == answer.apnsID)
            #expect(bodies.last?["outcome"]?.stringValue == "not-invoked")
        }
    }

    @Test func eventsStreamEveryRecordedResultAndEndWhenTheServerStops() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-events")
        for name in ["bob", "carol"] {
            let created = try TestSupport.nse(["device", "init", root + "/" + name, "--bundle-id", "org.example.app"])
            #expect(created.status == 0, "\(created.stderr)")
        }
        let bob = try Device.open(at: root + "/bob")
        let carol = try Device.open(at: root + "/carol")
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--device", root + "/bob", "--device", root + "/carol",
        ])
        defer { server.stop() }
        let all = try StreamingProcess("/usr/bin/curl", ["-sSN", "--max-time", "60", server.url + "/v1/events"])
        let carolOnly = try StreamingProcess(
            "/usr/bin/curl", ["-sSN", "--max-time", "60", server.url + "/v1/events?device=" + carol.config.remoteToken])
        _ = try await all.wait { $0.contains(": nse serve events") }
        _ = try await carolOnly.wait { $0.contains(": nse serve events") }
        var sent: [String] = []
        for device in [bob, carol, bob] {
            let output = try await runOffPool(
                "/usr/bin/curl",
                [
                    "-sS", "-o", "/dev/null", "-w", "%header{apns-id}", "--max-time", "30", "-H",
                    "apns-topic: org.example.app",
                    "--data-binary", alertPayload, server.url + "/3/device/" + device.config.remoteToken,
                ], timeout: 40)
            sent.append(output.stdout)
        }
        let everything = notificationEvents(try await all.wait { notificationEvents($0).count >= 3 })
        #expect(Set(everything.compactMap { $0["apns_id"]?.stringValue }) == Set(sent))
        let carolsEvents = notificationEvents(try await carolOnly.wait { notificationEvents($0).count >= 1 })
        #expect(carolsEvents.compactMap { $0["apns_id"]?.stringValue } == [sent[1]])
        // SIGTERM: the streams end, so the server's graceful shutdown is not held up by them.
        #expect(server.stop() == 0)
        #expect(all.waitForExit(seconds: 10))
        #expect(carolOnly.waitForExit(seconds: 10))
        #expect(notificationEvents(carolOnly.text).count == 1)
    }

    @Test func eventsForAnUnknownDeviceAreRefused() async throws {
        let fixture = try ServerFixture()
        let app = Application(responder: PushResponder(service: fixture.service))
        let answer = try await app.test(.router) { client in
            try await client.execute(uri: "/v1/events?device=00ff", method: .get) { (Int($0.status.code), reason($0)) }
        }
        #expect(answer.0 == 400 && answer.1 == "BadDeviceToken")
    }
}
