import Testing

@testable import NSESIP

@Suite struct ServerTransactionTableTests {
    static func request(branch: String, method: String = "MESSAGE", callID: String = "c1") throws -> SIPRequest {
        try #require(
            {
                guard
                    case .request(let r) = try SIPParser.parse(
                        "\(method) sip:bob@example.org SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;branch=\(branch)\r\nFrom: <sip:a@b>;tag=1\r\nCall-ID: \(callID)\r\nCSeq: 1 \(method)\r\n\r\n"
                    )
                else { return nil }
                return r
            }())
    }

    @Test func absorbsRetransmissionsAndReplaysResponse() throws {
        var table = SIPServerTransactionTable()
        let req = try Self.request(branch: "z9hG4bK1")
        guard case .new(let key) = table.receive(req) else {
            Issue.record("expected new")
            return
        }
        #expect(table.receive(req) == .retransmission(response: nil))
        table.store(response: [1, 2, 3], for: key)
        #expect(table.receive(req) == .retransmission(response: [1, 2, 3]))
        // Same branch, other method: a different transaction.
        if case .new = table.receive(try Self.request(branch: "z9hG4bK1", method: "OPTIONS")) {
        } else {
            Issue.record("expected new")
        }
        // RFC 2543 style (no magic cookie) matches on Call-ID/tag/CSeq.
        let old = try Self.request(branch: "abc", callID: "legacy")
        if case .new = table.receive(old) {} else { Issue.record("expected new") }
        #expect(table.receive(old) == .retransmission(response: nil))
    }

    @Test func expiresAndEvicts() throws {
        var table = SIPServerTransactionTable(lifetime: .milliseconds(100), capacity: 3)
        let start = ContinuousClock.now
        for i in 0..<5 { _ = table.receive(try Self.request(branch: "z9hG4bK\(i)"), now: start) }
        #expect(table.count == 3)
        _ = table.receive(try Self.request(branch: "z9hG4bKlate"), now: start + .seconds(1))
        #expect(table.count == 1)
        if case .new = table.receive(try Self.request(branch: "z9hG4bK0"), now: start + .seconds(1)) {
        } else {
            Issue.record("expected new after expiry")
        }
    }
}
