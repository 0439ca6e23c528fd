import Logging
import Testing

@testable import NSESIPServer

/// The held messages a REGISTER flushes: its AOR's undelivered ones, oldest first, looked up by AOR however many
/// messages other AORs have or the server delivered within the lifetime.
@Suite struct HeldStoreTests {
    static func message(_ id: String, aor: String, order: Int64, expiresAt: Int64 = 1000) -> HeldMessage {
        HeldMessage(
            id: id, aor: aor, callID: "c-\(id)", headers: [], body: [], receivedAt: 0, expiresAt: expiresAt,
            order: order)
    }

    @Test func waitingIsTheAORsUndeliveredOldestFirst() throws {
        var store = HeldStore(database: nil, logger: Logger(label: "test"))
        try store.hold(Self.message("b2", aor: "sip:bob@example.org", order: 5))
        try store.hold(Self.message("a1", aor: "sip:alice@example.org", order: 1))
        try store.hold(Self.message("b1", aor: "sip:bob@example.org", order: 2))
        try store.hold(Self.message("b3", aor: "sip:bob@example.org", order: 9, expiresAt: 50))
        #expect(store.waiting(aor: "sip:bob@example.org").map(\.id) == ["b1", "b2", "b3"])
        #expect(store.waiting(aor: "sip:bob@example.org", now: 60).map(\.id) == ["b1", "b2"])
        #expect(store.waiting(aor: nil).map(\.id) == ["a1", "b1", "b2", "b3"])
        #expect(store.waiting(aor: "sip:carol@example.org").isEmpty)

        // Delivered: kept for the lifetime (a retransmission still finds it), no longer waiting.
        #expect(store.markDelivered(id: "b1")?.id == "b1")
        #expect(store.markDelivered(id: "b1") == nil)
        #expect(store["b1"]?.isDelivered == true)
        #expect(store.waiting(aor: "sip:bob@example.org").map(\.id) == ["b2", "b3"])

        // Expired: dropped, and reported only when it was never delivered.
        #expect(store.sweep(now: 60).map(\.id) == ["b3"])
        #expect(store.waiting(aor: "sip:bob@example.org").map(\.id) == ["b2"])
        #expect(store.sweep(now: 2000).map(\.id).sorted() == ["a1", "b2"])
        #expect(store.waiting(aor: nil).isEmpty && store.waiting(aor: "sip:bob@example.org").isEmpty)
    }
}
