import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NSEAPNs
import NSEDevice
import NSEJSON
import NSEMetrics
import NSETestSupport
import Testing

@testable import NSEAPNsServer

/// Two devices of one app (`org.example.app`) and a service counting into its own registry, its channels in a
/// store of the test's (`limit` of them per app).
struct ActivityServer {
    let root: String
    let bob: Device
    let carol: Device
    let registry: MetricsRegistry
    let service: PushService

    /// One answer: status, reason, headers, body.
    struct Answer {
        var status: Int
        var reason: String?
        var headers: HTTPFields
        var body: JSON?
        func header(_ name: String) -> String? { headers[.init(name)!] }
    }

    static let topic = "org.example.app.push-type.liveactivity"

    init(
        budget: Int? = 10, channelLimit: Int = 10_000, environment: ProviderCertificate.Environment = .development,
        authentication: ProviderAuthentication? = nil, root given: String? = nil
    ) throws {
        let root = try given ?? TestSupport.temporaryDirectory("nse-activities")
        self.root = root
        bob = try Self.device(root + "/bob")
        carol = try Self.device(root + "/carol")
        registry = MetricsRegistry(
            valueHistogramBuckets: ServeMetrics.valueHistogramBuckets,
            durationHistogramBuckets: ServeMetrics.durationHistogramBuckets)
        service = PushService(
            devices: [bob, carol], concurrency: 2, queueCapacity: 16,
            extensionCommand: [TestSupport.referenceExtension],
            authentication: authentication, environment: environment,
            metrics: ServeMetrics(
                factory: registry.factory, contentType: MetricsRegistry.contentType, exposition: registry.exposition),
            liveActivityBudget: budget,
            channels: try ChannelStore(path: root + "/channels.db", limit: channelLimit),
            logger: ServedDevice.quietLogger)
    }

    /// The device at `path` (`org.example.app`), made the first time.
    static func device(_ path: String) throws -> Device {
        guard !FileManager.default.fileExists(atPath: path + "/device.json") else { return try Device.open(at: path) }
        var options = Device.Options()
        options.bundleID = "org.example.app"
        var device = try Device.create(at: path, options: options)
        // The offline store's rules without Apple's liberties (a seeded draw): what is held is then known.
        device.config.apnsStore = .strict
        try device.save()
        return device
    }

    var app: some ApplicationProtocol { Application(responder: PushResponder(service: service)) }

    func send(
        _ path: String, method: HTTPRequest.Method = .post, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> Answer {
        try await app.test(.router) { client in
            try await client.execute(
                uri: path, method: method, headers: fields(headers), body: body.map { ByteBuffer(string: $0) }
            ) { response in
                let bytes = Array(response.body.readableBytesView)
                let body = bytes.isEmpty ? nil : try? JSON.parse(bytes, options: .init(requireObject: false))
                return Answer(
                    status: Int(response.status.code), reason: body?["reason"]?.stringValue,
                    headers: response.headers, body: body)
            }
        }
    }

    /// A Live Activity push to `token`.
    func push(
        _ token: String, _ aps: String, priority: Int = 10, topic: String = ActivityServer.topic,
        type: String = "liveactivity", extra: [(String, String)] = []
    ) async throws -> Answer {
        try await send(
            "/3/device/\(token)",
            headers: [("apns-topic", topic), ("apns-push-type", type), ("apns-priority", String(priority))] + extra,
            body: #"{"aps":\#(aps)}"#)
    }

    /// The device's results, newest first, once there are `count` (bounded wait).
    func results(_ device: Device, count: Int) async throws -> [JSON] {
        var results: [JSON] = []
        for _ in 0..<500 {
            results = try await service.results(for: device, limit: 100, since: 0)
            if results.count >= count && service.queue.pending == 0 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        return results
    }

    /// Starts an activity on `device` as its app does; the activity.
    func start(_ device: Device, channel: String? = nil, eta: String = "10 min") throws -> LiveActivity {
        try device.liveActivities.update { state throws(DeviceError) in
            try state.start(
                attributesType: "Delivery", attributes: ["order": "42"], contentState: ["eta": .string(eta)],
                channel: channel, now: SystemTime.now)
        }
    }

    /// Creates a channel; its id.
    func channel(policy: Int) async throws -> String {
        let made = try await send(
            "/1/apps/org.example.app/channels",
            body: #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#)
        #expect(made.status == 201, "\(made.reason ?? "")")
        return try #require(made.header("apns-channel-id"))
    }

    func scrape() async throws -> MetricsExposition {
        try await app.test(.router) { client in
            try await client.execute(uri: "/metrics", method: .get) { MetricsExposition(String(buffer: $0.body)) }
        }
    }
}

/// Unix milliseconds and seconds now, for building pushes.
enum SystemTime {
    static var now: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
    static var seconds: Int64 { now / 1000 }
}

/// Live Activity pushes and broadcast channels through `nse serve`'s router (docs/serve.md, "Live Activities",
/// "Broadcast channels"): each rule, what is recorded, and the device's activity state after.
@Suite struct LiveActivityServeTests {
    @Test func anUpdateReachesItsActivityAndIsRecorded() async throws {
        let server = try ActivityServer()
        let activity = try server.start(server.bob)
        let token = try #require(activity.pushToken)
        let now = SystemTime.seconds
        let answer = try await server.push(
            token,
            #"{"timestamp":\#(now + 1),"event":"update","content-state":{"eta":"3 min"},"relevance-score":50,"alert":{"title":"Nearly there","body":{"loc-key":"IM_MSG","loc-args":[]}}}"#
        )
        #expect(answer.status == 200 && answer.header("apns-id") != nil)
        let result = try #require(try await server.results(server.bob, count: 1).first)
        #expect(result["outcome"] == "activity-updated", "\(result)")
        #expect(result["push_type"] == "liveactivity" && result["token"]?.stringValue == token)
        #expect(result["reason"]?.stringValue?.hasPrefix("activity-updated: ") == true)
        #expect(result["extension"] == .null, "no extension runs for ActivityKit")
        #expect(result["live_activity"]?["content_state"]?["eta"] == "3 min")
        #expect(result["live_activity"]?["phase"] == "active" && result["live_activity"]?["relevance_score"] == 50)
        #expect(result["display"]?["title"] == "Nearly there")
        #expect(result["display"]?["body"] == "You have received a message", "loc-key from the app's strings")
        let stored = try server.bob.liveActivities.read().activities[0]
        #expect(stored.contentState == ["eta": "3 min"] && stored.pushes == 1)
        // The activity's token finds its device's results, as the device's own tokens do.
        let read = try await server.send("/v1/devices/\(token)/notifications", method: .get)
        #expect(read.status == 200 && read.body?.arrayValue?.count == 1)
        // An older timestamp is recorded and changes nothing.
        let older = try await server.push(
            token, #"{"timestamp":\#(now - 60),"event":"update","content-state":{"eta":"9"}}"#)
        #expect(older.status == 200)
        let ignored = try #require(try await server.results(server.bob, count: 2).first)
        #expect(ignored["outcome"] == "activity-ignored" && ignored["notification"] == .null)
        #expect(ignored["reason"]?.stringValue?.hasPrefix("activity-out-of-order: ") == true)
        #expect(try server.bob.liveActivities.read().activities[0].contentState == ["eta": "3 min"])
    }

    /// `/v1/notify` to an activity's token is a Live Activity push for the store of an offline device: held in its
    /// own slot, it leaves the alert held for the same device alone (it was taken for the alert token's once).
    @Test func aNotifiedActivityPushIsHeldApartFromTheAlert() async throws {
        let server = try ActivityServer()
        let activity = try server.start(server.bob)
        let token = try #require(activity.pushToken)
        try server.service.setOnline(false, device: server.bob)
        let alert = try await server.send(
            "/v1/notify",
            body: #"{"device":"\#(server.bob.config.remoteToken)","payload":{"aps":{"alert":"hi"}}}"#)
        #expect(alert.status == 202)
        let now = SystemTime.seconds
        let update = try await server.send(
            "/v1/notify",
            body:
                #"{"device":"\#(token)","push_type":"liveactivity","payload":{"aps":{"timestamp":\#(now),"event":"update","content-state":{"eta":"1 min"}}}}"#
        )
        #expect(update.status == 202)
        #expect(server.service.heldCount(for: server.bob) == 2)
        try server.service.setOnline(true, device: server.bob)
        let results = try await server.results(server.bob, count: 2)
        #expect(Set(results.compactMap { $0["outcome"]?.stringValue }) == ["activity-updated", "not-invoked"])
    }

    @Test func theTokenIndexFollowsTheDevicesFiles() async throws {
        let server = try ActivityServer()
        let index = server.service.devices.liveActivities
        let token = try #require(try server.start(server.carol).pushToken)
        #expect(index.directory(for: token) == server.carol.directory, "made after the index was")
        #expect(index.directory(for: String(repeating: "ab", count: 32)) == nil)
        _ = try server.start(server.bob, channel: "Y2hhbm5lbDEyMzQ1Njc4OQ==")
        #expect(index.subscribers(of: "Y2hhbm5lbDEyMzQ1Njc4OQ==") == [server.bob.directory])
        // Forgotten by the device (a day after its dismissal): no longer found.
        try server.carol.liveActivities.update { state throws(DeviceError) in state.activities = [] }
        #expect(index.directory(for: token) == nil)
        let gone = try await server.push(token, #"{"timestamp":1,"event":"update","content-state":{}}"#)
        #expect(gone.status == 400 && gone.reason == "BadDeviceToken")
    }

    @Test func tokensAndTopicsFollowAPNsRules() async throws {
        let server = try ActivityServer()
        let token = try #require(try server.start(server.bob).pushToken)
        let aps = #"{"timestamp":1,"event":"update","content-state":{}}"#
        // An alert to an activity's token, a Live Activity push to the app's token: not the token for the topic.
        let alert = try await server.push(token, aps, topic: "org.example.app", type: "alert")
        #expect(alert.status == 400 && alert.reason == "DeviceTokenNotForTopic")
        let toRemote = try await server.push(server.bob.config.remoteToken, aps)
        #expect(toRemote.status == 400 && toRemote.reason == "DeviceTokenNotForTopic")
        let bareTopic = try await server.push(token, aps, topic: "org.example.app")
        #expect(bareTopic.status == 400 && bareTopic.reason == "BadTopic")
        let unknown = try await server.push(String(repeating: "ab", count: 32), aps)
        #expect(unknown.status == 400 && unknown.reason == "BadDeviceToken")
        let large = try await server.push(token, #"{"timestamp":1,"pad":"\#(String(repeating: "x", count: 4100))"}"#)
        #expect(large.status == 413 && large.reason == "PayloadTooLarge")
        // A malformed payload is accepted by APNs and refused by the device as any push is.
        let malformed = try await server.send(
            "/3/device/\(token)", headers: [("apns-topic", ActivityServer.topic), ("apns-push-type", "liveactivity")],
            body: "{not json")
        #expect(malformed.status == 200)
        let result = try #require(try await server.results(server.bob, count: 1).first)
        #expect(result["outcome"] == "rejected" && result["apns_reason"] == "MalformedPayload")
        #expect(server.service.queue.pending == 0)
    }

    @Test func aPushToStartTokenMadeWhileServedStartsAnActivityThatTakesUpdates() async throws {
        let server = try ActivityServer()
        // Made after the server started: the token index looks at the file again on a miss.
        let startToken = try server.bob.liveActivities.update { state throws(DeviceError) in
            try state.pushToStartToken(for: "Delivery")
        }
        let now = SystemTime.seconds
        let started = try await server.push(
            startToken,
            #"{"timestamp":\#(now),"event":"start","content-state":{"eta":"12 min","driver":"Sam"},"attributes-type":"Delivery","attributes":{"order":"42"},"input-push-token":1,"alert":{"title":"Order 42","body":"On its way"}}"#
        )
        #expect(started.status == 200, "\(started.reason ?? "")")
        let result = try #require(try await server.results(server.bob, count: 1).first)
        #expect(result["outcome"] == "activity-started", "\(result)")
        #expect(result["live_activity"]?["origin"] == "push-to-start")
        let token = try #require(result["live_activity"]?["push_token"]?.stringValue)
        // The new activity's token was made by the delivery: found too.
        let updated = try await server.push(
            token, #"{"timestamp":\#(now + 5),"event":"update","content-state":{"eta":"2 min","driver":"Sam"}}"#,
            priority: 5)
        #expect(updated.status == 200, "\(updated.reason ?? "")")
        #expect(try await server.results(server.bob, count: 2).first?["outcome"] == "activity-updated")
        // The lock-screen page shows it, its content state as lines.
        let page = try await server.app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
        }
        #expect(page.contains(#"<li class="activity phase-active""#), "\(page.prefix(400))")
        #expect(page.contains("<dt>eta</dt><dd>2 min</dd>") && page.contains("<dt>driver</dt><dd>Sam</dd>"))
        #expect(page.contains("Live Activity updated"))
        // Ended, it shows as such until dismissed; then the page no longer shows it.
        let ended = try await server.push(
            token, #"{"timestamp":\#(now + 6),"event":"end","dismissal-date":\#(now + 3600)}"#)
        #expect(ended.status == 200)
        #expect(try await server.results(server.bob, count: 3).first?["outcome"] == "activity-ended")
        let endedPage = try await server.app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
        }
        #expect(endedPage.contains(#"<li class="activity phase-ended""#))
    }

    @Test func priorityTenUpdatesPastTheBudgetAreThrottledUnlessTheAppAsksForFrequentUpdates() async throws {
        let server = try ActivityServer(budget: 2)
        let token = try #require(try server.start(server.bob).pushToken)
        let now = SystemTime.seconds
        for step in 1...3 {
            let answer = try await server.push(
                token, #"{"timestamp":\#(now + Int64(step)),"event":"update","content-state":{"step":\#(step)}}"#)
            #expect(answer.status == 200)
            _ = try await server.results(server.bob, count: step)
        }
        let results = try await server.results(server.bob, count: 3)
        #expect(
            results.map { $0["outcome"]?.stringValue ?? "" } == ["throttled", "activity-updated", "activity-updated"])
        #expect(results[0]["reason"]?.stringValue?.hasPrefix("activity-budget-exceeded: ") == true)
        // Priority 5 is never throttled.
        _ = try await server.push(
            token, #"{"timestamp":\#(now + 4),"event":"update","content-state":{"step":4}}"#, priority: 5)
        #expect(try await server.results(server.bob, count: 4).first?["outcome"] == "activity-updated")
        try server.bob.liveActivities.update { state throws(DeviceError) in state.frequentUpdates = true }
        _ = try await server.push(token, #"{"timestamp":\#(now + 5),"event":"update","content-state":{"step":5}}"#)
        #expect(try await server.results(server.bob, count: 5).first?["outcome"] == "activity-updated")
        let metrics = try await server.scrape()
        #expect(metrics.value("nse_notifications_total", ["push_type": "liveactivity", "outcome": "throttled"]) == 1)
        #expect(
            metrics.value("nse_notifications_total", ["push_type": "liveactivity", "outcome": "activity-updated"]) == 4)
        #expect(
            metrics.value(
                "nse_apns_pushes_total", ["push_type": "liveactivity", "priority": "10", "status": "200", "reason": ""])
                == 4)
    }

    @Test func channelsAreCreatedReadListedAndDeletedAsAPNsAnswers() async throws {
        let server = try ActivityServer(channelLimit: 2)
        let requestID = "0309f412-aa57-46a8-9ac6-b5aeca8c4594"
        let made = try await server.send(
            "/1/apps/org.example.app/channels", headers: [("apns-request-id", requestID)],
            body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        #expect(made.status == 201 && made.body == nil && made.header("apns-request-id") == requestID)
        let id = try #require(made.header("apns-channel-id"))
        #expect(id.count == 24 && id.hasSuffix("=="))
        let read = try await server.send(
            "/1/apps/org.example.app/channels", method: .get, headers: [("apns-channel-id", id)])
        #expect(
            read.status == 200 && read.body?["message-storage-policy"] == 1 && read.body?["push-type"] == "LiveActivity"
        )
        #expect(read.header("apns-request-id") != nil)
        let second = try await server.channel(policy: 0)
        let list = try await server.send("/1/apps/org.example.app/all-channels", method: .get)
        #expect(list.status == 200 && list.body?["channels"] == [.string(id), .string(second)])
        // The app's limit.
        let third = try await server.send(
            "/1/apps/org.example.app/channels", body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        #expect(third.status == 400 && third.reason == "CannotCreateChannelConfig")
        // Deleted: 204, then gone for reads (ChannelNotRegistered) and deletes (404 BadPath), and out of the list.
        let deleted = try await server.send(
            "/1/apps/org.example.app/channels", method: .delete, headers: [("apns-channel-id", id)])
        #expect(deleted.status == 204)
        let again = try await server.send(
            "/1/apps/org.example.app/channels", method: .delete, headers: [("apns-channel-id", id)])
        #expect(again.status == 404 && again.reason == "BadPath")
        let gone = try await server.send(
            "/1/apps/org.example.app/channels", method: .get, headers: [("apns-channel-id", id)])
        #expect(gone.status == 400 && gone.reason == "ChannelNotRegistered")
        #expect(
            try await server.send("/1/apps/org.example.app/all-channels", method: .get).body?["channels"] == [
                .string(second)
            ])
        // Room again for one.
        _ = try await server.channel(policy: 1)
        // Ids never made, of the wrong shape, absent; another app's channel is not this app's.
        for (header, expected) in [
            ([("apns-channel-id", "AAAAAAAAAAAAAAAAAAAAAA==")], "BadChannelId"),
            ([("apns-channel-id", "not a channel")], "BadChannelId"), ([], "MissingChannelId"),
        ] {
            let answer = try await server.send("/1/apps/org.example.app/channels", method: .get, headers: header)
            #expect(answer.status == 400 && answer.reason == expected)
        }
        let otherApp = try await server.send(
            "/1/apps/org.example.other/channels", method: .get, headers: [("apns-channel-id", second)])
        #expect(otherApp.reason == "BadChannelId")
        for (body, expected) in [
            (#"{"message-storage-policy":1}"#, "MissingPushType"),
            (#"{"message-storage-policy":1,"push-type":"Alert"}"#, "InvalidPushType"),
            (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, "BadMessageStoragePolicy"),
            ("not json", "MissingPushType"),
        ] {
            let answer = try await server.send("/1/apps/org.example.app/channels", body: body)
            #expect(answer.status == 400 && answer.reason == expected, "\(body)")
        }
        let wrongMethod = try await server.send("/1/apps/org.example.app/all-channels", method: .post)
        #expect(wrongMethod.status == 405 && wrongMethod.reason == "MethodNotAllowed")
        // Channels are per environment: a production server on the same store does not see these.
        let production = try ActivityServer(environment: .production, root: server.root)
        let none = try await production.send("/1/apps/org.example.app/all-channels", method: .get)
        #expect(none.body?["channels"] == [])
        let metrics = try await server.scrape()
        #expect(
            metrics.value("nse_apns_channel_requests_total", ["operation": "create", "status": "201", "reason": ""])
                == 3)
        #expect(
            metrics.value(
                "nse_apns_channel_requests_total",
                ["operation": "create", "status": "400", "reason": "CannotCreateChannelConfig"]) == 1)
    }

    @Test func aBroadcastReachesEveryActivitySubscribedToItsChannel() async throws {
        let server = try ActivityServer()
        let channel = try await server.channel(policy: 0)
        let onBob = try server.start(server.bob, channel: channel)
        let onCarol = try server.start(server.carol, channel: channel)
        let apart = try server.start(server.carol)
        #expect(onBob.pushToken == nil && onBob.channelID == channel)
        let requestID = "4c106c5f-2013-40b9-8193-eaa270b8f2c5"
        let now = SystemTime.seconds
        let headers = [
            ("apns-push-type", "liveactivity"), ("apns-channel-id", channel), ("apns-expiration", "0"),
            ("apns-priority", "10"), ("apns-request-id", requestID),
        ]
        let body = #"{"aps":{"timestamp":\#(now + 1),"event":"update","content-state":{"eta":"1 min"}}}"#
        let sent = try await server.send("/4/broadcasts/apps/org.example.app", headers: headers, body: body)
        #expect(sent.status == 200 && sent.header("apns-request-id") == requestID && sent.body == nil)
        #expect(sent.header("apns-unique-id") != nil, "development")
        let bob = try #require(try await server.results(server.bob, count: 1).first)
        let carol = try await server.results(server.carol, count: 1)
        #expect(bob["outcome"] == "activity-updated" && bob["apns_id"]?.stringValue == requestID)
        #expect(bob["live_activity"]?["channel_id"]?.stringValue == channel)
        #expect(bob["token"]?.stringValue == onBob.id.lowercased())
        #expect(carol.count == 1 && carol.first?["live_activity"]?["id"]?.stringValue == onCarol.id)
        let carolState = try server.carol.liveActivities.read().activities
        #expect(carolState.first { $0.id == onCarol.id }?.contentState == ["eta": "1 min"])
        #expect(carolState.first { $0.id == apart.id }?.contentState == ["eta": "10 min"], "not subscribed")

        // APNs's rules, in order.
        func refusal(_ headers: [(String, String)], body: String = body) async throws -> (Int, String?) {
            let answer = try await server.send("/4/broadcasts/apps/org.example.app", headers: headers, body: body)
            return (answer.status, answer.reason)
        }
        let without = { (name: String) in headers.filter { $0.0 != name } }
        #expect(try await refusal(without("apns-push-type")) == (400, "MissingPushType"))
        #expect(
            try await refusal(without("apns-push-type") + [("apns-push-type", "alert")]) == (400, "InvalidPushType"))
        #expect(try await refusal(without("apns-channel-id")) == (400, "MissingChannelId"))
        #expect(try await refusal(without("apns-channel-id") + [("apns-channel-id", "x")]) == (400, "BadChannelId"))
        #expect(try await refusal(without("apns-expiration")) == (400, "BadExpirationDate"))
        #expect(try await refusal(without("apns-priority") + [("apns-priority", "7")]) == (400, "BadPriority"))
        #expect(try await refusal(without("apns-request-id") + [("apns-request-id", "nope")]) == (400, "BadMessageId"))
        #expect(try await refusal(headers, body: "") == (400, "PayloadEmpty"))
        let large = #"{"aps":{"timestamp":1},"pad":"\#(String(repeating: "y", count: 5110))"}"#
        #expect(try await refusal(headers, body: large) == (413, "PayloadTooLarge"))
        let unknown = "AAAAAAAAAAAAAAAAAAAAAA=="
        #expect(try await refusal(without("apns-channel-id") + [("apns-channel-id", unknown)]) == (400, "BadChannelId"))
        _ = try await server.send(
            "/1/apps/org.example.app/channels", method: .delete, headers: [("apns-channel-id", channel)])
        #expect(try await refusal(headers) == (400, "ChannelNotRegistered"))
        let metrics = try await server.scrape()
        #expect(metrics.value("nse_apns_broadcasts_total", ["priority": "10", "status": "200", "reason": ""]) == 1)
        #expect(
            metrics.value(
                "nse_apns_broadcasts_total", ["priority": "10", "status": "400", "reason": "ChannelNotRegistered"])
                == 1)
    }

    @Test func theStoragePolicyDecidesWhatAnOfflineDeviceGets() async throws {
        let server = try ActivityServer()
        let noStorage = try await server.channel(policy: 0)
        let mostRecent = try await server.channel(policy: 1)
        let first = try server.start(server.bob, channel: noStorage)
        let second = try server.start(server.bob, channel: mostRecent)
        try server.service.setOnline(false, device: server.bob)
        let now = SystemTime.seconds
        func broadcast(_ channel: String, eta: String, at timestamp: Int64) async throws {
            let sent = try await server.send(
                "/4/broadcasts/apps/org.example.app",
                headers: [
                    ("apns-push-type", "liveactivity"), ("apns-channel-id", channel),
                    ("apns-expiration", String(now + 3600)),
                ],
                body: #"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"eta":"\#(eta)"}}}"#)
            #expect(sent.status == 200)
        }
        // No storage: the offline device never gets it.
        try await broadcast(noStorage, eta: "lost", at: now + 1)
        let dropped = try #require(try await server.results(server.bob, count: 1).first)
        #expect(dropped["outcome"] == "expired", "\(dropped)")
        // Most recent stored: the newest waits for the device.
        try await broadcast(mostRecent, eta: "older", at: now + 2)
        try await broadcast(mostRecent, eta: "newest", at: now + 3)
        let replaced = try await server.results(server.bob, count: 2)
        #expect(replaced.first?["outcome"] == "replaced", "\(replaced)")
        #expect(server.service.heldCount(for: server.bob) == 1)
        try server.service.setOnline(true, device: server.bob)
        let back = try await server.results(server.bob, count: 3)
        #expect(back.first?["outcome"] == "activity-updated" && back.first?["held_offline"] == true)
        let activities = try server.bob.liveActivities.read().activities
        #expect(activities.first { $0.id == second.id }?.contentState == ["eta": "newest"])
        #expect(activities.first { $0.id == first.id }?.contentState == ["eta": "10 min"])
    }

    @Test func aBroadcastAnsweredBeforeAStopIsHandedOutWhenTheServerStartsAgain() async throws {
        let first = try ActivityServer()
        let channel = try await first.channel(policy: 1)
        let activity = try first.start(first.bob, channel: channel)
        // What a server that died right after the 200 leaves behind: the broadcast, kept, not handed out.
        let store = try ChannelStore(path: first.root + "/channels.db")
        let channels = try await first.send("/1/apps/org.example.app/all-channels", method: .get)
        #expect(channels.body?["channels"] == [.string(channel)])
        try TestBroadcasts.keep(
            in: store, channel: channel,
            payload: #"{"aps":{"timestamp":\#(SystemTime.seconds + 1),"event":"update","content-state":{"eta":"now"}}}"#
        )
        await first.service.drain()
        let second = try ActivityServer(root: first.root)
        #expect(second.service.resumeUnfinished() == 0, "no push of the results was left")
        let result = try #require(try await second.results(second.bob, count: 1).first)
        #expect(result["outcome"] == "activity-updated")
        #expect(
            try second.bob.liveActivities.read().activities.first { $0.id == activity.id }?.contentState == [
                "eta": "now"
            ])
        await second.service.drain()
        #expect(try TestBroadcasts.unfinished(in: store) == 0)
    }

    @Test func theNewPathsTakeTheProviderChecksOfDevicePushes() async throws {
        let root = try TestSupport.temporaryDirectory("nse-activities-auth")
        let key = try TestAPNsKey(in: root)
        let verifier = try await ProviderTokenVerifier(
            keyFile: key.path, keyID: TestAPNsKey.keyID, teamID: TestAPNsKey.teamID)
        let other = try await ProviderTokenVerifier(keyFile: key.path, keyID: "OTHERKEY01", teamID: "OTHERTEAM1")
        let server = try ActivityServer(
            authentication: ProviderAuthentication(verifiers: [verifier, other]), root: root)
        let create = #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#
        let anonymous = try await server.send("/1/apps/org.example.app/channels", body: create)
        #expect(anonymous.status == 403 && anonymous.reason == "MissingProviderToken")
        let otherTeam = try await server.send(
            "/1/apps/org.example.app/channels",
            headers: [("authorization", "bearer " + (try await key.token(keyID: "OTHERKEY01", teamID: "OTHERTEAM1")))],
            body: create)
        #expect(otherTeam.status == 400 && otherTeam.reason == "TopicDisallowed")
        let bearer = "bearer " + (try await key.token())
        let made = try await server.send(
            "/1/apps/org.example.app/channels", headers: [("authorization", bearer)], body: create)
        #expect(made.status == 201)
        let broadcast = try await server.send(
            "/4/broadcasts/apps/org.example.app",
            headers: [
                ("apns-push-type", "liveactivity"), ("apns-channel-id", made.header("apns-channel-id") ?? ""),
                ("apns-expiration", "0"),
            ], body: #"{"aps":{"timestamp":1,"event":"update","content-state":{}}}"#)
        #expect(broadcast.status == 403 && broadcast.reason == "MissingProviderToken")
    }
}

/// A broadcast written into a channel store as a server leaves it between its 200 and its hand-out.
enum TestBroadcasts {
    static func keep(in store: ChannelStore, channel: String, payload: String) throws {
        guard
            case .found(let found) = try store.lookup(channel, bundleID: "org.example.app", environment: "development")
        else { throw LiveTestError(description: "no channel \(channel)") }
        _ = try store.accept(
            on: found, requestID: "9a1f3c2e-1111-4222-8333-944455556666",
            uniqueID: "9a1f3c2e-1111-4222-8333-944455556667",
            priority: 10, expiration: SystemTime.seconds + 3600, collapseID: nil, payload: Array(payload.utf8),
            now: SystemTime.now)
    }

    static func unfinished(in store: ChannelStore) throws -> Int {
        try store.unfinished().count
    }
}
