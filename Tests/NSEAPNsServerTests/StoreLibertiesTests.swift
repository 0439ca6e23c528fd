import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NSEAPNsServer
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// The `apple` offline store (docs/serve.md, "The store's liberties"): an older push sometimes kept, deliveries
/// reordered, low-priority pushes dropped, each recorded in the result it touched, the same on every run with the
/// same seed; `strict` takes none.
@Suite struct StoreLibertiesTests {
    func push(
        _ client: some TestClientProtocol, _ token: String, id: Int, topic: String = "org.example.app",
        type: String = "alert", priority: Int = 10
    ) async throws -> Int {
        try await client.execute(
            uri: "/3/device/\(token)", method: .post,
            headers: fields([
                ("apns-topic", topic), ("apns-push-type", type), ("apns-priority", String(priority)),
                ("apns-id", String(format: "00000000-0000-4000-8000-%012d", id)),
            ]),
            body: ByteBuffer(string: type == "background" ? #"{"aps":{"content-available":1}}"# : alertPayload)
        ) { $0.status.code }
    }

    /// A server with one offline device whose store is `store`, seeded with `seed`.
    func offline(_ store: APNsStorePolicy, seed: UInt64?) throws -> ServerFixture {
        var device = try ServerFixture().device
        device.config.online = false
        device.config.apnsStore = store
        device.config.apnsStoreSeed = seed
        try device.save()
        return try ServerFixture(reopening: device.directory)
    }

    /// Twelve alerts and eight low-priority background pushes while offline, then the device back: every push has
    /// exactly one result, and what each says.
    func run(_ store: APNsStorePolicy, seed: UInt64?) async throws -> [Int: JSON] {
        let fixture = try offline(store, seed: seed)
        try await fixture.app.test(.router) { client async throws in
            for id in 1...20 {
                let background = id % 5 == 0 || id % 7 == 0
                #expect(
                    try await push(
                        client, fixture.remote, id: id, type: background ? "background" : "alert",
                        priority: background ? 5 : 10) == 200)
            }
        }
        try fixture.service.setOnline(true, device: fixture.device)
        try await fixture.settle()
        return try await fixture.outcomes(count: 20)
    }

    @Test func theDrawsAreSeededIndependentAndNearTheirChance() {
        for kind in [StoreLiberties.Draw.keepOlder, .reorder, .dropLowPriority] {
            let taken = (0..<20_000).filter { StoreLiberties.takes(kind, seed: 42, sequence: UInt64($0)) }.count
            let share = Double(taken) / 20_000
            #expect(abs(share - kind.chance) < 0.02, "\(kind): \(share)")
        }
        #expect(
            StoreLiberties.draw(.keepOlder, seed: 7, sequence: 3)
                == StoreLiberties.draw(.keepOlder, seed: 7, sequence: 3))
        #expect(
            StoreLiberties.draw(.keepOlder, seed: 7, sequence: 3) != StoreLiberties.draw(.reorder, seed: 7, sequence: 3)
        )
        #expect(
            StoreLiberties.draw(.keepOlder, seed: 7, sequence: 3)
                != StoreLiberties.draw(.keepOlder, seed: 8, sequence: 3))
    }

    @Test func theAppleStoreTakesItsLibertiesRecordsEachAndRepeatsWithItsSeed() async throws {
        let first = try await run(.apple, seed: 2026)
        #expect(first.count == 20, "every push has one result: none lost, none twice")
        let liberties = first.values.compactMap { $0["store_liberty"]?.stringValue }
        #expect(liberties.contains("replaced"), "\(liberties)")
        #expect(liberties.contains("dropped-low-priority"), "\(liberties)")
        for result in first.values {
            switch result["store_liberty"]?.stringValue {
            case "replaced"?:
                #expect(result["outcome"] == "replaced")
                #expect(result["reason"]?.stringValue?.hasPrefix("apns-store: an older push") == true)
            case "dropped-low-priority"?:
                #expect(result["outcome"] == "dropped")
                #expect(result["reason"]?.stringValue?.hasPrefix("apns-store: apns-priority 5") == true)
            default:
                #expect(result["outcome"] != "dropped")
            }
        }
        // One push delivered: the one the store kept, which need not be the newest.
        let delivered = first.filter { $0.value["held_offline"]?.boolValue == true }
        #expect(delivered.count == 1)
        // The same seed, another server and another device: the same liberties on the same pushes.
        let second = try await run(.apple, seed: 2026)
        for id in 1...20 {
            #expect(first[id]?["store_liberty"] == second[id]?["store_liberty"], "push \(id)")
            #expect(first[id]?["outcome"] == second[id]?["outcome"], "push \(id)")
        }
    }

    @Test func theStrictStoreKeepsTheNewestAndDropsNothing() async throws {
        let results = try await run(.strict, seed: 2026)
        #expect(results.count == 20)
        #expect(results.values.allSatisfy { $0["store_liberty"] == nil })
        #expect(results.values.allSatisfy { $0["outcome"] != "dropped" })
        #expect(results[20]?["held_offline"]?.boolValue == true)
        #expect((1...19).allSatisfy { results[$0]?["outcome"] == "replaced" })
    }

    /// The app's push and its VoIP push stored, the device back: with a seed that reorders, the newer goes first and
    /// says so; one that does not, oldest first and nothing said.
    @Test func deliveriesAreReorderedWhenTheDrawSaysSo() async throws {
        // Two pushes stored (draws 0 and 1), then the return's draw (2) decides.
        let reordering = try #require(
            (0..<1000).first { StoreLiberties.takes(.reorder, seed: UInt64($0), sequence: 2) })
        let inOrder = try #require(
            (0..<1000).first { !StoreLiberties.takes(.reorder, seed: UInt64($0), sequence: 2) })
        for (seed, reordered) in [(UInt64(reordering), true), (UInt64(inOrder), false)] {
            let fixture = try offline(.apple, seed: seed)
            try await fixture.app.test(.router) { client async throws in
                #expect(try await push(client, fixture.remote, id: 1) == 200)
                #expect(
                    try await push(client, fixture.voip, id: 2, topic: "org.example.app.voip", type: "voip") == 200)
            }
            try fixture.service.setOnline(true, device: fixture.device)
            try await fixture.settle()
            let results = try await fixture.outcomes(count: 2)
            #expect(results[2]?["store_liberty"]?.stringValue == (reordered ? "reordered" : nil), "seed \(seed)")
            #expect(results[1]?["store_liberty"] == nil)
        }
    }
}
