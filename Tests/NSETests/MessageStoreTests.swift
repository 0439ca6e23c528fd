import Foundation
import NSEDevice
import NSETestSupport
import Testing

@Suite struct MessageStoreTests {
    func message(_ callID: String, at time: Int64 = 1_000_000, body: String = "nse1.x.y.z") -> StoredMessage {
        StoredMessage(callID: callID, from: "sip:alice@example.org", to: "sip:bob@example.org", contentType: "text/plain", body: Array(body.utf8), receivedAt: time)
    }

    @Test func keepsDuplicatesOnceAndHandsOutOnce() throws {
        let store = MessageStore(directory: try TestSupport.temporaryDirectory() + "/store")
        #expect(try store.put(message("a@host", at: 1000)))
        #expect(try !store.put(message("a@host", at: 1001)))
        #expect(try store.put(message("b@host;weird/chars", at: 1002)))
        #expect(store.all(now: 2000).map(\.callID) == ["a@host", "b@host;weird/chars"])
        let taken = store.take(callID: "a@host", now: 2000)
        #expect(taken == message("a@host", at: 1000))
        #expect(store.take(callID: "a@host", now: 2000) == nil)
        #expect(!store.contains(callID: "a@host") && store.contains(callID: "b@host;weird/chars"))
    }

    @Test func expiresAfterFiveMinutes() throws {
        let store = MessageStore(directory: try TestSupport.temporaryDirectory() + "/store")
        try store.put(message("old@host", at: 0))
        #expect(store.take(callID: "old@host", now: 5 * 60 * 1000 + 1) == nil)
        try store.put(message("fresh@host", at: 1_000))
        #expect(store.take(callID: "fresh@host", now: 5 * 60 * 1000) != nil)
    }

    @Test func concurrentTakersGetAMessageExactlyOnce() async throws {
        let store = MessageStore(directory: try TestSupport.temporaryDirectory() + "/store")
        for index in 0..<20 { try store.put(message("m\(index)@host", at: 1000)) }
        let winners = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var count = 0
                    for index in 0..<20 where store.take(callID: "m\(index)@host", now: 2000) != nil { count += 1 }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(winners == 20)
    }
}
