import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// A device that is not reachable (docs/serve.md, "An offline device"): pushes wait as APNs stores them (the newest
/// per app and topic, until `apns-expiration`; 0 is now or never) and go through the extension when it is back.
@Suite struct OfflineDeviceTests {
    let later = String(Int(Date().timeIntervalSince1970) + 3600)

    func push(
        _ client: some TestClientProtocol, _ token: String, id: Int, topic: String = "org.example.app",
        type: String = "alert", extra: [(String, String)] = []
    ) async throws -> Int {
        try await client.execute(
            uri: "/3/device/\(token)", method: .post,
            headers: fields(
                [
                    ("apns-topic", topic), ("apns-push-type", type),
                    ("apns-id", String(format: "00000000-0000-4000-8000-%012d", id)),
                ] + extra),
            body: ByteBuffer(string: alertPayload)
        ) { $0.status.code }
    }

    func offlineFixture() throws -> ServerFixture {
        var device = try ServerFixture().device
        device.config.online = false
        // The rules alone: these tests check what APNs promises (the `apple` store's liberties: StoreLibertiesTests).
        device.config.apnsStore = .strict
        try device.save()
        return try ServerFixture(reopening: device.directory)
    }

    @Test func pushesWaitAsAPNsKeepsThemAndComeWhenTheDeviceIsBack() async throws {
        let fixture = try offlineFixture()
        try await fixture.app.test(.router) { client async throws in
            #expect(try await push(client, fixture.remote, id: 1, extra: [("apns-expiration", "0")]) == 200)
            #expect(try await push(client, fixture.remote, id: 2, extra: [("apns-expiration", later)]) == 200)
            #expect(try await push(client, fixture.remote, id: 3, extra: [("apns-collapse-id", "lunch")]) == 200)
            #expect(try await push(client, fixture.remote, id: 4, extra: [("apns-collapse-id", "lunch")]) == 200)
            #expect(
                try await push(client, fixture.voip, id: 5, topic: "org.example.app.voip", type: "voip") == 200)
        }
        var results = try await fixture.outcomes(count: 3)
        #expect(results[1]?["outcome"]?.stringValue == "expired")
        #expect(results[1]?["reason"]?.stringValue?.contains("now or never") == true)
        #expect(results[2]?["outcome"]?.stringValue == "replaced")
        #expect(results[2]?["reason"]?.stringValue?.contains("keeps only the newest") == true)
        #expect(results[3]?["outcome"]?.stringValue == "replaced")
        #expect(results[3]?["reason"]?.stringValue?.contains("apns-collapse-id") == true)
        #expect(results[4] == nil && results[5] == nil)
        // One kept per topic: the app's and its VoIP one.
        #expect(fixture.service.heldCount(for: fixture.device) == 2)
        #expect(fixture.service.queue.pending == 0)

        try fixture.service.setOnline(true, device: fixture.device)
        #expect(try Device.open(at: fixture.device.directory).config.online)
        try await fixture.settle()
        results = try await fixture.outcomes(count: 5)
        #expect(results[4]?["outcome"]?.stringValue == "not-invoked")
        #expect(results[4]?["held_offline"]?.boolValue == true)
        #expect(results[5]?["push_type"]?.stringValue == "voip")
        #expect(results[5]?["held_offline"]?.boolValue == true)
        // Delivered oldest first.
        #expect((results[4]?["id"]?.intValue ?? 0) < (results[5]?["id"]?.intValue ?? 0))
        #expect(fixture.service.heldCount(for: fixture.device) == 0)
    }

    @Test func aHeldPushWhoseExpirationPassesIsDroppedWhenTheDeviceReturns() async throws {
        let fixture = try offlineFixture()
        let soon = String(Int(Date().timeIntervalSince1970) + 1)
        try await fixture.app.test(.router) { client async throws in
            #expect(try await push(client, fixture.remote, id: 7, extra: [("apns-expiration", soon)]) == 200)
        }
        try await Task.sleep(for: .milliseconds(2100))
        try fixture.service.setOnline(true, device: fixture.device)
        try await fixture.settle()
        let results = try await fixture.outcomes(count: 1)
        #expect(results[7]?["outcome"]?.stringValue == "expired")
        #expect(results[7]?["reason"]?.stringValue?.contains("came back online") == true)
    }

    @Test func theStateAndTheHeldPushOutliveTheServer() async throws {
        let first = try offlineFixture()
        try await first.app.test(.router) { client async throws in
            #expect(try await push(client, first.remote, id: 8) == 200)
        }
        // A new server on the same device: the push is still held, not run, until the device is back.
        let second = try ServerFixture(reopening: first.device.directory)
        #expect(second.service.resumeUnfinished() == 0)
        #expect(second.service.heldCount(for: second.device) == 1)
        try second.service.setOnline(true, device: second.device)
        try await second.settle()
        let results = try await second.outcomes(count: 1)
        #expect(results[8]?["held_offline"]?.boolValue == true)
    }

    @Test func theControlEndpointAndDeviceSetTakeTheDeviceOfflineAndBack() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client async throws in
            let off = try await client.execute(
                uri: "/v1/control/devices/\(fixture.remote)/online", method: .put,
                body: ByteBuffer(string: #"{"online":false}"#)
            ) { ($0.status.code, try? JSON.parse(Array($0.body.readableBytesView))) }
            #expect(off.0 == 200 && off.1?["online"]?.boolValue == false)
            #expect(try Device.open(at: fixture.device.directory).config.online == false)
            // /v1/notify answers 202 at once for a held push instead of waiting for the device.
            let notified = try await client.execute(
                uri: "/v1/notify", method: .post,
                body: ByteBuffer(string: #"{"device":"\#(fixture.remote)","payload":\#(alertPayload)}"#)
            ) { ($0.status.code, try? JSON.parse(Array($0.body.readableBytesView))) }
            #expect(notified.0 == 202 && notified.1?["held_offline"]?.boolValue == true)
            let bad = try await client.execute(
                uri: "/v1/control/devices/\(fixture.remote)/online", method: .put, body: ByteBuffer(string: "{}")
            ) { $0.status.code }
            #expect(bad == 400)
            // `nse device set --online true` by another process: read on the server's next look at the device.
            var device = try Device.open(at: fixture.device.directory)
            device.config.online = true
            try device.save()
            let listed = try await client.execute(uri: "/v1/devices/\(fixture.remote)/notifications", method: .get) {
                $0.status.code
            }
            #expect(listed == 200)
        }
        try await fixture.settle()
        _ = try await fixture.outcomes(count: 1)
        let results = try await fixture.service.results(for: fixture.device, limit: 10, since: 0)
        #expect(results.count == 1)
        #expect(results.first?["held_offline"]?.boolValue == true)
    }

    /// `--low-priority-interval`: priority-5 pushes wait for their burst and then go together, oldest first; a
    /// priority-10 push goes at once; a server that stops delivers what waits before it exits.
    @Test func lowPriorityPushesGoLateAndInABurst() async throws {
        let fixture = try ServerFixture(
            reopening: try ServerFixture().device.directory, concurrency: 4, lowPriorityInterval: 2.5)
        try await fixture.app.test(.router) { client async throws in
            for id in 21...23 {
                #expect(try await push(client, fixture.remote, id: id, extra: [("apns-priority", "5")]) == 200)
            }
            #expect(try await push(client, fixture.remote, id: 24) == 200)
        }
        // A generous interval: the urgent push is recorded long before the burst, even on a loaded machine.
        var results = try await fixture.outcomes(count: 1)
        #expect(results[24] != nil)
        // The urgent push was recorded while the three low-priority ones still waited for their burst.
        #expect(results.count == 1, "\(results.keys.sorted())")
        results = try await fixture.outcomes(count: 4)
        let burst = try (21...23).map { try #require(results[$0]) }
        #expect(burst.allSatisfy { $0["delivered_in_burst"]?.boolValue == true })
        // The first one started the burst's timer and waited all of it; the others joined it.
        #expect((burst[0]["queued_ms"]?.doubleValue ?? 0) >= 2500)
        let ids = burst.compactMap { $0["id"]?.intValue }
        #expect(ids == ids.sorted())

        let stopping = try ServerFixture(
            reopening: try ServerFixture().device.directory, concurrency: 2, lowPriorityInterval: 3600)
        try await stopping.app.test(.router) { client async throws in
            #expect(try await push(client, stopping.remote, id: 25, extra: [("apns-priority", "5")]) == 200)
        }
        await stopping.service.drain()
        let drained = try recordedResults(stopping.device.directory)
        #expect(drained.count == 1 && drained.first?["delivered_in_burst"]?.boolValue == true)
    }

    /// The binaries as a user runs them: `nse device set --online false`, `nse serve`, a push with curl, the device
    /// back with `nse device set --online true`, the result read back.
    @Test func theCommandLineTakesADeviceOfflineAndBack() async throws {
        let fixture = try ServedDevice("nse-serve-offline")
        let directory = fixture.root + "/bob"
        #expect(try TestSupport.nse(["device", "set", directory, "--online", "false"]).status == 0)
        #expect(try TestSupport.nse(["device", "set", directory, "--online", "maybe"]).status == 64)
        let server = try ServeProcess(["--listen", "127.0.0.1:0", "--device", directory])
        defer { server.stop() }
        #expect(try await fixture.push(to: server.url, apnsID: "00000000-0000-4000-8000-000000000009") == "200")
        func devices() async throws -> JSON? {
            let listed = try await runOffPool(
                "/usr/bin/curl", ["-sS", "--max-time", "10", server.url + "/v1/devices"], timeout: 20)
            return try? JSON.parse(listed.stdout, options: JSONParseOptions(requireObject: false))
        }
        #expect(try await devices()?.arrayValue?.first?["held"]?.intValue == 1)
        #expect(try recordedResults(directory).isEmpty)
        #expect(try TestSupport.nse(["device", "set", directory, "--online", "true"]).status == 0)
        var results: [JSON] = []
        for _ in 0..<100 where results.isEmpty {
            let read = try await runOffPool(
                "/usr/bin/curl",
                ["-sS", "--max-time", "10", server.url + "/v1/devices/\(fixture.token)/notifications"],
                timeout: 20)
            results = (try? JSON.parse(read.stdout, options: JSONParseOptions(requireObject: false)))?.arrayValue ?? []
            if results.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(results.first?["held_offline"]?.boolValue == true)
        #expect(server.stop() == 0)
    }
}

extension ServerFixture {
    /// The recorded results by the number their apns-id ends with (`00000000-0000-4000-8000-%012d`), waiting
    /// (bounded) for `count` of them.
    func outcomes(count: Int) async throws -> [Int: JSON] {
        var results: [JSON] = []
        for _ in 0..<1000 {
            results = try await service.results(for: device, limit: 200, since: 0)
            if results.count >= count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        var byID: [Int: JSON] = [:]
        for result in results {
            if let id = result["apns_id"]?.stringValue?.split(separator: "-").last.flatMap({ Int($0) }) {
                byID[id] = result
            }
        }
        return byID
    }
}
