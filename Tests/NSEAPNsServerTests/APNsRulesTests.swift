import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NSEAPNsServer
import NSEDevice
import NSEHost
import NSEJSON
import NSETestSupport
import Testing

/// A device, a service running the reference extension, and the in-process application around them.
struct ServerFixture {
    let device: Device
    let service: PushService
    var remote: String { device.config.remoteToken }
    var voip: String { device.config.voipToken }

    init(
        concurrency: Int = 2, queue: Int = 16, environment: ProviderCertificate.Environment = .development
    ) throws {
        let root = try TestSupport.temporaryDirectory("nse-serve")
        var options = Device.Options()
        options.bundleID = "org.example.app"
        options.filtering = true
        device = try Device.create(at: root + "/bob", options: options)
        service = PushService(
            devices: [device], concurrency: concurrency, queueCapacity: queue,
            extensionCommand: [TestSupport.referenceExtension], environment: environment, logger: Logger(label: "test"))
    }

    /// A second service on an existing device (a restarted server).
    init(reopening directory: String, concurrency: Int = 2, queue: Int = 16, lowPriorityInterval: Double = 0) throws {
        device = try Device.open(at: directory)
        service = PushService(
            devices: [device], concurrency: concurrency, queueCapacity: queue,
            extensionCommand: [TestSupport.referenceExtension], lowPriorityInterval: lowPriorityInterval,
            logger: Logger(label: "test"))
    }

    var app: some ApplicationProtocol { Application(responder: PushResponder(service: service)) }

    /// Waits (bounded) until every accepted push is recorded.
    func settle() async throws {
        for _ in 0..<1000 where service.queue.pending > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(service.queue.pending == 0)
    }
}

func fields(_ pairs: [(String, String)]) -> HTTPFields {
    var fields = HTTPFields()
    for (name, value) in pairs { fields.append(.init(name: .init(name)!, value: value)) }
    return fields
}

func reason(_ response: TestResponse) -> String? {
    (try? JSON.parse(Array(response.body.readableBytesView)))?["reason"]?.stringValue
}

let alertPayload = #"{"aps":{"alert":{"title":"Hi","body":"there"}}}"#

@Suite struct APNsRulesTests {
    /// One request against the router; returns status, reason and apns-id.
    func send(
        _ fixture: ServerFixture, path: String? = nil, method: HTTPRequest.Method = .post,
        headers: [(String, String)] = [("apns-topic", "org.example.app"), ("apns-push-type", "alert")],
        body: String? = alertPayload
    ) async throws -> (status: Int, reason: String?, apnsID: String?) {
        try await fixture.app.test(.router) { client in
            try await client.execute(
                uri: path ?? "/3/device/\(fixture.remote)", method: method, headers: fields(headers),
                body: body.map { ByteBuffer(string: $0) }
            ) { response in
                (Int(response.status.code), reason(response), response.headers[.init("apns-id")!])
            }
        }
    }

    @Test func acceptsAValidPushAndGeneratesALowercaseID() async throws {
        let fixture = try ServerFixture()
        let answer = try await send(fixture)
        #expect(answer.status == 200)
        #expect(answer.reason == nil)
        let id = try #require(answer.apnsID)
        #expect(APNsValidation.isUUID(id) && id == id.lowercased())
        try await fixture.settle()
        let recorded = try fixture.service.store.results(for: fixture.device, limit: 10)
        #expect(recorded.count == 1)
        #expect(recorded.first?["apns_id"]?.stringValue == id)
        #expect(recorded.first?["outcome"]?.stringValue == "not-invoked")
        #expect(recorded.first?["token"]?.stringValue == fixture.remote.lowercased())
        #expect(recorded.first?["received_at"]?.intValue != nil)
    }

    @Test func echoesTheGivenIDAndAcceptsAnUppercaseToken() async throws {
        let fixture = try ServerFixture()
        let id = "AEF3935A-967E-474C-BA2B-BF133FEAD219"
        let answer = try await send(
            fixture, path: "/3/device/\(fixture.remote.uppercased())",
            headers: [("apns-topic", "org.example.app"), ("apns-id", id)])
        #expect(answer.status == 200)
        #expect(answer.apnsID == id)
        // A refusal echoes it the same way.
        let refused = try await send(fixture, headers: [("apns-id", id)])
        #expect(refused.reason == "MissingTopic" && refused.apnsID == id)
        // A refusal of a push without apns-id carries a new one, as APNs's answers all do.
        let unnamed = try await send(fixture, path: "/3/device/" + String(repeating: "ab", count: 32))
        #expect(unnamed.reason == "BadDeviceToken")
        let generated = try #require(unnamed.apnsID)
        #expect(APNsValidation.isUUID(generated) && generated == generated.lowercased() && generated != id)
        try await fixture.settle()
    }

    @Test func unknownOrMalformedTokenIsBadDeviceToken() async throws {
        let fixture = try ServerFixture()
        #expect(
            try await send(fixture, path: "/3/device/" + String(repeating: "ab", count: 32)).reason == "BadDeviceToken")
        #expect(try await send(fixture, path: "/3/device/not-hex").reason == "BadDeviceToken")
        let missing = try await send(fixture, path: "/3/device/")
        #expect(missing.status == 400 && missing.reason == "MissingDeviceToken")
    }

    @Test func pushTypeRules() async throws {
        let fixture = try ServerFixture()
        let invalid = try await send(fixture, headers: [("apns-topic", "org.example.app"), ("apns-push-type", "fax")])
        #expect(invalid.status == 400 && invalid.reason == "InvalidPushType")
        // A known type no token of this device serves.
        let location = try await send(
            fixture, headers: [("apns-topic", "org.example.app.location-query"), ("apns-push-type", "location")])
        #expect(location.reason == "DeviceTokenNotForTopic")
    }

    @Test func topicRules() async throws {
        let fixture = try ServerFixture()
        let missing = try await send(fixture, headers: [("apns-push-type", "alert")])
        #expect(missing.status == 400 && missing.reason == "MissingTopic")
        #expect(try await send(fixture, headers: [("apns-topic", "org.other.app")]).reason == "DeviceTokenNotForTopic")
        #expect(try await send(fixture, headers: [("apns-topic", "bad topic")]).reason == "BadTopic")
        // alert to the voip topic, voip to the bundle topic.
        #expect(
            try await send(fixture, headers: [("apns-topic", "org.example.app.voip"), ("apns-push-type", "alert")])
                .reason == "BadTopic")
        #expect(
            try await send(
                fixture, path: "/3/device/\(fixture.voip)",
                headers: [("apns-topic", "org.example.app"), ("apns-push-type", "voip")]
            )
            .reason == "BadTopic")
        // voip on the remote token, alert on the voip token.
        #expect(
            try await send(fixture, headers: [("apns-topic", "org.example.app.voip"), ("apns-push-type", "voip")])
                .reason
                == "DeviceTokenNotForTopic")
        #expect(
            try await send(fixture, path: "/3/device/\(fixture.voip)", headers: [("apns-topic", "org.example.app")])
                .reason
                == "DeviceTokenNotForTopic")
        // voip on the voip token, with the type given or inferred from the topic.
        let call = #"{"aps":{},"call-id":"x"}"#
        #expect(
            try await send(
                fixture, path: "/3/device/\(fixture.voip)",
                headers: [("apns-topic", "org.example.app.voip"), ("apns-push-type", "voip")],
                body: call
            ).status == 200)
        #expect(
            try await send(
                fixture, path: "/3/device/\(fixture.voip)", headers: [("apns-topic", "org.example.app.voip")],
                body: call
            ).status
                == 200)
        try await fixture.settle()
    }

    @Test func priorityRules() async throws {
        let fixture = try ServerFixture()
        let topic = ("apns-topic", "org.example.app")
        #expect(try await send(fixture, headers: [topic, ("apns-priority", "7")]).reason == "BadPriority")
        #expect(try await send(fixture, headers: [topic, ("apns-priority", "high")]).reason == "BadPriority")
        for priority in ["10", "5", "1"] {
            #expect(try await send(fixture, headers: [topic, ("apns-priority", priority)]).status == 200)
        }
        let background = #"{"aps":{"content-available":1}}"#
        let backgroundTen = try await send(
            fixture, headers: [topic, ("apns-push-type", "background"), ("apns-priority", "10")], body: background)
        #expect(backgroundTen.status == 400 && backgroundTen.reason == "BadPriority")
        #expect(
            try await send(fixture, headers: [topic, ("apns-push-type", "background")], body: background).status == 200)
        #expect(
            try await send(
                fixture, headers: [topic, ("apns-push-type", "background"), ("apns-priority", "5")], body: background
            ).status
                == 200)
        // Priority 10 with a content-available-only payload, even as an alert push.
        #expect(
            try await send(fixture, headers: [topic, ("apns-priority", "10")], body: background).reason == "BadPriority"
        )
        try await fixture.settle()
    }

    @Test func expirationCollapseIDAndMessageIDRules() async throws {
        let fixture = try ServerFixture()
        let topic = ("apns-topic", "org.example.app")
        #expect(
            try await send(fixture, headers: [topic, ("apns-expiration", "tomorrow")]).reason == "BadExpirationDate")
        #expect(try await send(fixture, headers: [topic, ("apns-expiration", "-1")]).reason == "BadExpirationDate")
        #expect(try await send(fixture, headers: [topic, ("apns-expiration", "0")]).status == 200)
        #expect(try await send(fixture, headers: [topic, ("apns-expiration", "1893456000")]).status == 200)
        #expect(
            try await send(fixture, headers: [topic, ("apns-collapse-id", String(repeating: "c", count: 64))]).status
                == 200)
        let long = try await send(fixture, headers: [topic, ("apns-collapse-id", String(repeating: "c", count: 65))])
        #expect(long.status == 400 && long.reason == "BadCollapseId")
        #expect(try await send(fixture, headers: [topic, ("apns-id", "not-a-uuid")]).reason == "BadMessageId")
        #expect(
            try await send(fixture, headers: [topic, ("apns-id", "AEF3935A-967E-474C-BA2B-BF133FEAD21")]).reason
                == "BadMessageId")
        try await fixture.settle()
    }

    @Test func duplicateHeaders() async throws {
        let fixture = try ServerFixture()
        let answer = try await send(
            fixture, headers: [("apns-topic", "org.example.app"), ("apns-priority", "10"), ("apns-priority", "10")])
        #expect(answer.status == 400 && answer.reason == "DuplicateHeaders")
        #expect(
            try await send(fixture, headers: [("apns-topic", "org.example.app"), ("apns-topic", "org.example.app")])
                .reason
                == "DuplicateHeaders")
    }

    @Test func payloadLimits() async throws {
        let fixture = try ServerFixture()
        let topic = ("apns-topic", "org.example.app")
        let empty = try await send(fixture, headers: [topic], body: nil)
        #expect(empty.status == 400 && empty.reason == "PayloadEmpty")
        func padded(_ size: Int) -> String {
            let head = #"{"aps":{"alert":"x"},"pad":""#
            return head + String(repeating: "p", count: size - head.utf8.count - 2) + #""}"#
        }
        #expect(padded(4096).utf8.count == 4096)
        #expect(try await send(fixture, headers: [topic], body: padded(4096)).status == 200)
        let large = try await send(fixture, headers: [topic], body: padded(4097))
        #expect(large.status == 413 && large.reason == "PayloadTooLarge")
        let voip = [("apns-topic", "org.example.app.voip"), ("apns-push-type", "voip")]
        let path = "/3/device/\(fixture.voip)"
        #expect(try await send(fixture, path: path, headers: voip, body: padded(5120)).status == 200)
        #expect(try await send(fixture, path: path, headers: voip, body: padded(5121)).reason == "PayloadTooLarge")
        #expect(try await send(fixture, path: path, headers: voip, body: padded(20000)).status == 413)
        try await fixture.settle()
    }

    @Test func pathsAndMethods() async throws {
        let fixture = try ServerFixture()
        let other = try await send(fixture, path: "/3/devices/\(fixture.remote)")
        #expect(other.status == 404 && other.reason == "BadPath")
        // `/` is the lock-screen page: GET only.
        #expect(try await send(fixture, path: "/").reason == "MethodNotAllowed")
        #expect(try await send(fixture, path: "/3/device/\(fixture.remote)/extra").reason == "BadPath")
        let get = try await send(fixture, method: .get, body: nil)
        #expect(get.status == 405 && get.reason == "MethodNotAllowed")
        #expect(try await send(fixture, method: .put).status == 405)
        // Every route answers APNs's 405 to the methods it does not take, and unknown paths APNs's 404 (the router's
        // own 404 would carry no reason).
        let wrongMethods: [(String, HTTPRequest.Method)] = [
            ("/3/device/\(fixture.remote)", .delete), ("/3/device/\(fixture.remote)", .head), ("/3/device", .get),
            ("/v1/notify", .get), ("/v1/devices", .post), ("/v1/events", .head), ("/v1/events", .options),
            ("/v1/devices/\(fixture.remote)/notifications", .patch),
        ]
        for (path, method) in wrongMethods {
            let answer = try await send(fixture, path: path, method: method, body: nil)
            // A HEAD answer is the head alone (RFC 9110 §9.3.2): its status, no body to carry the reason.
            let reason = method == .head ? nil : "MethodNotAllowed"
            #expect(answer.status == 405 && answer.reason == reason, "\(method) \(path)")
        }
        for path in ["/v1", "/v1/nothing", "/v1/devices/\(fixture.remote)", "/3", "/4/device/\(fixture.remote)"] {
            let answer = try await send(fixture, path: path, method: .get, body: nil)
            #expect(answer.status == 404 && answer.reason == "BadPath", "\(path)")
        }
    }

    @Test func resultsEndpointIsNewestFirstWithALimit() async throws {
        let fixture = try ServerFixture()
        var ids: [String] = []
        for _ in 0..<3 {
            let answer = try await send(fixture)
            ids.append(try #require(answer.apnsID))
            try await fixture.settle()  // in order, so newest first is well defined
        }
        let (all, two, unknown): ([JSON], [JSON], Int) = try await fixture.app.test(.router) { client in
            let all = try await client.execute(uri: "/v1/devices/\(fixture.remote)/notifications", method: .get) {
                try JSON.parse(Array($0.body.readableBytesView), options: .init(requireObject: false)).arrayValue ?? []
            }
            let two = try await client.execute(
                uri: "/v1/devices/\(fixture.voip.uppercased())/notifications?limit=2", method: .get
            ) {
                try JSON.parse(Array($0.body.readableBytesView), options: .init(requireObject: false)).arrayValue ?? []
            }
            let unknown = try await client.execute(uri: "/v1/devices/abcd/notifications", method: .get) {
                Int($0.status.code)
            }
            return (all, two, unknown)
        }
        #expect(all.compactMap { $0["apns_id"]?.stringValue } == ids.reversed())
        #expect(two.compactMap { $0["apns_id"]?.stringValue } == Array(ids.reversed().prefix(2)))
        #expect(unknown == 400)
        #expect(FileManager.default.fileExists(atPath: fixture.device.directory + "/notifications/results.db"))
    }

    @Test func notifyWaitsAndAnswersTheResult() async throws {
        let fixture = try ServerFixture()
        let body =
            #"{"device":"\#(fixture.remote)","payload":{"aps":{"alert":{"title":"T","body":"B"},"mutable-content":1}},"push_type":"alert"}"#
        let result: JSON = try await fixture.app.test(.router) { client in
            try await client.execute(uri: "/v1/notify", method: .post, body: ByteBuffer(string: body)) { response in
                #expect(response.status == .ok)
                return try JSON.parse(Array(response.body.readableBytesView))
            }
        }
        #expect(result["outcome"] != nil)
        #expect(result["extension"]?.objectValue != nil)
        #expect(result["apns_id"]?.stringValue != nil)
        #expect(try fixture.service.store.results(for: fixture.device, limit: 5).count == 1)
        let bad = try await fixture.app.test(.router) { client in
            try await client.execute(
                uri: "/v1/notify", method: .post, body: ByteBuffer(string: #"{"device":"00","payload":{}}"#)
            ) {
                reason($0)
            }
        }
        #expect(bad == "BadDeviceToken")
    }

    @Test func fullQueueAnswersTooManyRequests() async throws {
        // One worker, no waiting room: while the extension waits for the test to release it, the next push is refused.
        let root = try TestSupport.temporaryDirectory("nse-serve")
        let device = try Device.create(at: root + "/bob")
        let service = PushService(
            devices: [device], concurrency: 1, queueCapacity: 0,
            extensionCommand: ["/bin/sh", "-c", "while [ ! -e '\(root)/release' ]; do sleep 0.05; done"],
            limits: ExtensionLimits(budget: 20), logger: Logger(label: "test"))
        let app = Application(responder: PushResponder(service: service))
        let payload = #"{"aps":{"alert":"x","mutable-content":1}}"#
        let statuses: [Int] = try await app.test(.router) { client in
            var statuses: [Int] = []
            for _ in 0..<2 {
                statuses.append(
                    try await client.execute(
                        uri: "/3/device/\(device.config.remoteToken)", method: .post,
                        headers: fields([("apns-topic", "org.example.app")]),
                        body: ByteBuffer(string: payload)
                    ) { Int($0.status.code) })
            }
            return statuses
        }
        #expect(statuses == [200, 429])
        try TestSupport.write("", to: root + "/release")
        for _ in 0..<1000 where service.queue.pending > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(try service.store.results(for: device, limit: 10).count == 1)
    }
}
