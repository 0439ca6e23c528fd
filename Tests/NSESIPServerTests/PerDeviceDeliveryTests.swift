import Foundation
import Logging
import NSEMetrics
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

@testable import NSESIPServer

/// A person with several phones (issue #36 §2): a held MESSAGE is for the devices registered when it arrived, each
/// delivered apart and once, across restarts too; a device registered later never gets it.
@Suite("Per-device delivery", .serialized, .timeLimit(.minutes(2)))
struct PerDeviceDeliveryTests {
    static let bob = "sip:bob@example.org"

    static func message(_ id: String, devices: [String], order: Int64 = 1) -> HeldMessage {
        HeldMessage(
            id: id, aor: bob, callID: "c-\(id)", headers: [], body: [], receivedAt: 0, expiresAt: 1000,
            recipients: devices.map { HeldMessage.Recipient(device: $0, delivery: .pending) }, order: order)
    }

    // MARK: - the store

    @Test func eachDeviceGetsItsOwnShareOnce() throws {
        var store = HeldStore(database: nil, logger: Logger(label: "test"))
        try store.hold(Self.message("m1", devices: ["instance:a", "instance:b", "instance:c"]))
        #expect(store.waiting(aor: Self.bob, device: "instance:a").map(\.id) == ["m1"])
        #expect(store.waiting(aor: Self.bob, device: "instance:late").isEmpty)

        let markedA = store.markDelivered(id: "m1", device: "instance:a")
        let afterA = try #require(markedA)
        #expect(afterA.pendingDevices == ["instance:b", "instance:c"] && !afterA.isDelivered)
        // A's second 2xx (a retransmission answered again) counts nothing; a stranger's counts nothing either.
        #expect(store.markDelivered(id: "m1", device: "instance:a") == nil)
        #expect(store.markDelivered(id: "m1", device: "instance:late") == nil)
        #expect(store.waiting(aor: Self.bob, device: "instance:a").isEmpty)
        #expect(store.waiting(aor: Self.bob, device: "instance:b").map(\.id) == ["m1"])
        #expect(store.waiting(aor: Self.bob).map(\.id) == ["m1"])

        #expect(store.markDelivered(id: "m1", device: "instance:c")?.pendingDevices == ["instance:b"])
        let markedB = store.markDelivered(id: "m1", device: "instance:b")
        let last = try #require(markedB)
        #expect(last.isDelivered && last.pendingDevices.isEmpty)
        #expect(store.waiting(aor: Self.bob).isEmpty)
        // Delivered to all: nothing expires undelivered.
        #expect(store.sweep(now: 2000).isEmpty)
    }

    @Test func aMessageWithoutRecipientsIsDeliveredByAnyDevice() throws {
        // As a database of an older nse holds them.
        var store = HeldStore(database: nil, logger: Logger(label: "test"))
        try store.hold(Self.message("old", devices: []))
        #expect(store.waiting(aor: Self.bob, device: "instance:whoever").map(\.id) == ["old"])
        #expect(store.markDelivered(id: "old", device: "instance:whoever")?.isDelivered == true)
        #expect(store.waiting(aor: Self.bob, device: "instance:other").isEmpty)
    }

    @Test func aPartlyDeliveredMessageExpiresNamingTheDevicesThatNeverGotIt() throws {
        var store = HeldStore(database: nil, logger: Logger(label: "test"))
        try store.hold(Self.message("m2", devices: ["instance:a", "instance:b"]))
        _ = store.markDelivered(id: "m2", device: "instance:b")
        let expired = store.sweep(now: 1000)
        #expect(expired.map(\.id) == ["m2"])
        #expect(expired.first?.pendingDevices == ["instance:a"])
    }

    @Test func aReplacingBindingInheritsWhatTheOldOneWasOwed() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var store = HeldStore(database: try ServerDatabase(directory: dir.file("db")), logger: Logger(label: "test"))
        try store.hold(Self.message("m1", devices: ["instance:old", "instance:other"]))
        try store.hold(Self.message("m2", devices: ["instance:old", "instance:new"], order: 2))
        #expect(store.reassign(aor: Self.bob, from: "instance:old", to: "instance:new") == 1)
        #expect(store.waiting(aor: Self.bob, device: "instance:new").map(\.id) == ["m1", "m2"])
        #expect(store.waiting(aor: Self.bob, device: "instance:old").map(\.id) == ["m2"])
        var reloaded = HeldStore(
            database: try ServerDatabase(directory: dir.file("db")), logger: Logger(label: "test"))
        _ = try reloaded.load()
        #expect(reloaded["m1"]?.recipients.map(\.device) == ["instance:new", "instance:other"])
    }

    @Test func metricsCountEachDeviceAndTheCopiesStillOwed() throws {
        let registry = MetricsRegistry()
        let metrics = SIPServerMetrics(factory: registry.factory)
        var store = HeldStore(database: nil, logger: Logger(label: "test"), metrics: metrics)
        try store.hold(Self.message("m1", devices: ["instance:a", "instance:b", "instance:c"]))
        var exposition = MetricsExposition(registry.exposition())
        #expect(exposition.value("nse_sip_held_messages") == 1 && exposition.value("nse_sip_held_deliveries") == 3)
        for (device, remaining) in [("instance:a", 2), ("instance:b", 1), ("instance:c", 0)] {
            _ = store.markDelivered(id: "m1", device: device)
            metrics.count(
                .delivered(aor: Self.bob, callID: "c-m1", id: "m1", device: device, remaining: remaining))
        }
        exposition = MetricsExposition(registry.exposition())
        #expect(exposition.value("nse_sip_device_deliveries_total") == 3)
        #expect(exposition.value("nse_sip_messages_delivered_total") == 1)
        #expect(exposition.value("nse_sip_held_messages") == 0 && exposition.value("nse_sip_held_deliveries") == 0)
    }

    // MARK: - the database

    @Test func deliveriesAreKeptPerDeviceAcrossReopening() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        do {
            let database = try ServerDatabase(directory: dir.file("db"))
            var store = HeldStore(database: database, logger: Logger(label: "test"))
            try store.hold(Self.message("m1", devices: ["instance:a", "instance:b", "instance:c"]))
            _ = store.markDelivered(id: "m1", device: "instance:b")
        }
        let reopened = try ServerDatabase(directory: dir.file("db"))
        var store = HeldStore(database: reopened, logger: Logger(label: "test"))
        let loaded = try store.load()
        #expect(loaded.count == 1)
        #expect(loaded.first?.recipients.map(\.device) == ["instance:a", "instance:b", "instance:c"])
        #expect(loaded.first?.pendingDevices == ["instance:a", "instance:c"])
        #expect(store.waiting(aor: Self.bob, device: "instance:b").isEmpty)
        #expect(store.waiting(aor: Self.bob, device: "instance:c").map(\.id) == ["m1"])
        _ = store.markDelivered(id: "m1", device: "instance:a")
        _ = store.markDelivered(id: "m1", device: "instance:c")
        var again = HeldStore(database: try ServerDatabase(directory: dir.file("db")), logger: Logger(label: "test"))
        #expect(try again.load().first?.isDelivered == true)
        // Expired: the message and its devices' rows go together.
        try reopened.deleteExpired(now: 5000)
        #expect(try reopened.heldMessages().isEmpty)
        #expect(try rowCount(dir.file("db"), table: "held_delivery") == 0)
    }

    @Test func aVersion1DatabaseOpensAndItsMessagesGoToAnyDevice() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try FileManager.default.createDirectory(atPath: dir.file("db"), withIntermediateDirectories: true)
        let made = try runPython(
            """
            import sqlite3,sys
            c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2])
            c.execute("INSERT INTO held_message (id, aor, call_id, headers, body, received_at, expires_at, arrival) VALUES ('v1', 'sip:bob@example.org', 'old-call', '[]', x'6869', 1, 9999999999, 1)")
            c.execute('PRAGMA user_version = 1'); c.commit()
            """, [dir.file("db/sip-server.db"), ServerDatabase.schema[0]])
        #expect(made)
        var store = HeldStore(database: try ServerDatabase(directory: dir.file("db")), logger: Logger(label: "test"))
        let loaded = try store.load()
        #expect(loaded.map(\.id) == ["v1"] && loaded.first?.recipients.isEmpty == true)
        #expect(store.markDelivered(id: "v1", device: "instance:any")?.isDelivered == true)
    }

    // MARK: - the server

    @Test("Three phones asleep: one MESSAGE held for the three, one push each, each gets it once on its REGISTER")
    func threeSleepingPhones() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(300))
        config.databaseDirectory = dir.file("db")
        try await withSIPServer(config) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            for phone in Phone.three { try await phone.registerAndSleep(proxy: proxy) }
            #expect(await server.bindingCount(aor: Self.bob) == 3)
            try await withAgent { sender in
                let sent = try await sendFromAlice(sender, proxy: proxy, body: "to all three", callID: "three-1")
                #expect(sent.statusCode == 202)
            }
            let held = await server.eventLog().compactMap { event -> [String]? in
                if case .held(_, "three-1", _, let devices) = event { return devices }
                return nil
            }
            #expect(held == [Phone.three.map(\.key)])
            let pushes = try await push.waitForRecords(3)
            #expect(Set(pushes.map(\.path)) == Set(Phone.three.map { "/3/device/\($0.token)" }))

            // A fourth phone registered after the message: it never gets it.
            let late = Phone(4)
            let lateMessages = try await late.wake(proxy: proxy, expecting: 0)
            #expect(lateMessages.isEmpty)

            for phone in Phone.three {
                let got = try await phone.wake(proxy: proxy, expecting: 1)
                #expect(got.map(\.callID) == ["three-1"])
            }
            try await eventually("delivered to all") { await server.undeliveredCallIDs().isEmpty }
            // Woken again: nothing more (each has it once).
            #expect(try await Phone.three[0].wake(proxy: proxy, expecting: 0).isEmpty)
            let deliveries = await server.eventLog().compactMap { event -> (String?, Int)? in
                if case .delivered(_, "three-1", _, let device, let remaining) = event { return (device, remaining) }
                return nil
            }
            #expect(deliveries.map(\.0) == Phone.three.map(\.key))
            #expect(deliveries.map(\.1) == [2, 1, 0])
        }
    }

    @Test("A phone whose app was reinstalled (new +sip.instance, same token) still gets what was held for it")
    func reinstalledApp() async throws {
        let config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(300))
        try await withSIPServer(config) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            try await Phone(1).registerAndSleep(proxy: proxy)
            try await Phone(2).registerAndSleep(proxy: proxy)
            try await withAgent { sender in
                let sent = try await sendFromAlice(sender, proxy: proxy, body: "before the reinstall", callID: "re-1")
                #expect(sent.statusCode == 202)
            }
            let reinstalled = Phone(1, instanceSuffix: "e")
            #expect(try await reinstalled.wake(proxy: proxy, expecting: 1).map(\.callID) == ["re-1"])
            #expect(await server.bindingCount(aor: Self.bob) == 2)
            #expect(try await Phone(2).wake(proxy: proxy, expecting: 1).map(\.callID) == ["re-1"])
            try await eventually("delivered to both") { await server.undeliveredCallIDs().isEmpty }
        }
    }

    @Test("Live and asleep phones, a restart between deliveries: each phone gets the message once, none twice")
    func mixedAndRestarted() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(300))
        config.databaseDirectory = dir.file("db")
        let (a, b, c) = (Phone.three[0], Phone.three[1], Phone.three[2])
        let live = fastUA()
        let liveCollector = MessageCollector(live)
        try await withSIPServer(config, closing: [live]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            try await b.registerAndSleep(proxy: proxy)
            try await c.registerAndSleep(proxy: proxy)
            // Phone A stays in the foreground: its copy goes at once over its connection.
            #expect(try await a.register(live, proxy: proxy).statusCode == 200)
            try await withAgent { sender in
                let sent = try await sendFromAlice(sender, proxy: proxy, body: "mixed", callID: "mixed-1")
                #expect(sent.statusCode == 200)
            }
            #expect(try await liveCollector.waitForCount(1).map(\.callID) == ["mixed-1"])
            #expect(try await b.wake(proxy: proxy, expecting: 1).map(\.callID) == ["mixed-1"])
            try await eventually("B's delivery stored") {
                await server.eventLog().contains {
                    if case .delivered(_, "mixed-1", _, b.key, 1) = $0 { return true }
                    return false
                }
            }
        }
        try await withSIPServer(config) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            #expect(await server.undeliveredCallIDs(aor: Self.bob) == ["mixed-1"])
            #expect(try await a.wake(proxy: proxy, expecting: 0).isEmpty)
            #expect(try await b.wake(proxy: proxy, expecting: 0).isEmpty)
            #expect(try await c.wake(proxy: proxy, expecting: 1).map(\.callID) == ["mixed-1"])
            try await eventually("delivered to all") { await server.undeliveredCallIDs().isEmpty }
        }
        #expect(liveCollector.messages.count == 1)
    }
}

/// One of Bob's phones: its own `+sip.instance` and push token, so the registrar keeps one binding per phone.
struct Phone: Sendable {
    let number: Int
    /// The last digit of its instance: another one is the same phone's app reinstalled (same token).
    let instanceSuffix: String

    init(_ number: Int, instanceSuffix: String = "0") {
        self.number = number
        self.instanceSuffix = instanceSuffix
    }

    static let three = [Phone(1), Phone(2), Phone(3)]

    var instance: String { "\"<urn:uuid:6f2b1c3a-0000-4000-8000-0000000b0b\(number)\(instanceSuffix)>\"" }
    var key: String { "instance:<urn:uuid:6f2b1c3a-0000-4000-8000-0000000b0b\(number)\(instanceSuffix)>" }
    var token: String { String(repeating: "\(number)", count: 8) + String(remoteToken.dropFirst(8)) }

    func register(_ agent: SIPUserAgent, proxy: SIPURI) async throws -> SIPRegistrationResult {
        try await agent.register(
            aor: bobAOR, password: nil, proxy: proxy, expires: 600,
            contactURIParameters: [
                SIPParameter("pn-provider", "apns.dev"), SIPParameter("pn-prid", "\(token):remote"),
                SIPParameter("pn-param", "ABCD1234.org.example.nse.remote"),
            ],
            contactHeaderParameters: [SIPParameter("+sip.instance", instance)])
    }

    /// Registers, then closes the connection (the app goes to the background).
    func registerAndSleep(proxy: SIPURI) async throws {
        let status = try await withAgent { agent in try await register(agent, proxy: proxy).statusCode }
        #expect(status == 200)
    }

    /// Wakes (a push), registers and collects what arrives: `expecting` messages, then 400 ms more for any extra.
    func wake(proxy: SIPURI, expecting: Int) async throws -> [SIPReceivedMessage] {
        try await withAgent { agent in
            let collector = MessageCollector(agent)
            #expect(try await register(agent, proxy: proxy).statusCode == 200)
            if expecting > 0 { _ = try await collector.waitForCount(expecting) }
            try await Task.sleep(for: .milliseconds(400))
            return collector.messages
        }
    }
}

/// Rows of `table` in `directory`'s database, read by another process.
func rowCount(_ directory: String, table: String) throws -> Int {
    let out = directory + "/.rows"
    guard
        try runPython(
            "import sqlite3,sys; n=sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM ' + sys.argv[3]).fetchone()[0]; open(sys.argv[2],'w').write(str(n))",
            [directory + "/sip-server.db", out, table])
    else { throw TestError.setup("sqlite3 count failed") }
    defer { try? FileManager.default.removeItem(atPath: out) }
    return Int(try String(contentsOfFile: out, encoding: .utf8)) ?? -1
}
