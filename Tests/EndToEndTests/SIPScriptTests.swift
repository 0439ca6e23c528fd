import Foundation
import NSEJSON
import NSESIP
import NSETestSupport
import Testing

@testable import NSEReplay

/// `sip.script`: a broken script is a broken case naming the field; the player answers live requests with the
/// recorded answers on the live transaction, at the recorded offsets, and notes what differs.
@Suite struct SIPScriptTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-sip-script") }

    static func register(cseq: Int, branch: String, port: Int, auth: Bool = false) -> String {
        "REGISTER sip:example.org SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:\(port);branch=\(branch);rport\r\n"
            + "From: <sip:bob@example.org>;tag=f\r\nTo: <sip:bob@example.org>\r\nCall-ID: reg-\(port)\r\n"
            + "CSeq: \(cseq) REGISTER\r\nContact: <sip:bob@127.0.0.1:\(port);transport=tcp>\r\nExpires: 600\r\n"
            + (auth ? "Authorization: [redacted]\r\n" : "") + "Content-Length: 0\r\n\r\n"
    }

    static func response(_ status: String, cseq: String, callID: String, extra: String = "") -> String {
        "SIP/2.0 \(status)\r\nVia: SIP/2.0/TCP 127.0.0.1:40000;branch=z9hG4bKold;rport=40000;received=127.0.0.1\r\n"
            + "From: <sip:bob@example.org>;tag=f\r\nTo: <sip:bob@example.org>;tag=srv\r\nCall-ID: \(callID)\r\n"
            + "CSeq: \(cseq)\r\n\(extra)Content-Length: 0\r\n\r\n"
    }

    static let message =
        "MESSAGE sip:bob@127.0.0.1:40000;transport=tcp SIP/2.0\r\nVia: SIP/2.0/TCP 10.0.0.1:5060;branch=z9hG4bKsrv\r\n"
        + "From: <sip:alice@example.org>;tag=a\r\nTo: <sip:bob@example.org>\r\nCall-ID: m1\r\nCSeq: 10 MESSAGE\r\n"
        + "Content-Type: application/vnd.nse.envelope\r\nContent-Length: 6\r\n\r\nnse1.x"

    /// A challenged REGISTER, a MESSAGE 3 s after its 200, the device's 200, then the server hangs up.
    static var script: JSON {
        [
            "transport": "tcp",
            "events": [
                [
                    "at_ms": 1.0, "direction": "sent",
                    "message": .string(register(cseq: 1, branch: "z9hG4bKa", port: 40000)),
                ],
                [
                    "at_ms": 3.0, "direction": "received",
                    "message": .string(
                        response(
                            "401 Unauthorized", cseq: "1 REGISTER", callID: "reg-40000",
                            extra: "WWW-Authenticate: Digest realm=\"example.org\", nonce=\"abc\"\r\n")),
                ],
                [
                    "at_ms": 5.0, "direction": "sent",
                    "message": .string(register(cseq: 2, branch: "z9hG4bKb", port: 40000, auth: true)),
                ],
                [
                    "at_ms": 6.0, "direction": "received",
                    "message": .string(
                        response(
                            "200 OK", cseq: "2 REGISTER", callID: "reg-40000",
                            extra: "Contact: <sip:bob@127.0.0.1:40000;transport=tcp>;expires=3600\r\n")),
                ],
                ["at_ms": 3006.0, "direction": "received", "message": .string(message)],
                [
                    "at_ms": 3008.0, "direction": "sent",
                    "message": .string(response("200 OK", cseq: "10 MESSAGE", callID: "m1")),
                ],
                ["at_ms": 3010.0, "direction": "received", "closed": true],
            ],
        ]
    }

    func load(sip: JSON) throws -> ReplayCase {
        let document: JSON = [
            "payload": ["aps": ["alert": "hi", "mutable-content": 1], "call-id": "m1"], "sip": sip,
            "expect": ["outcome": "rewritten"],
        ]
        let path = root + "/case-\(UUID().uuidString).json"
        try TestSupport.write(document.serialized(), to: path)
        return try ReplayCase.load(path)
    }

    func event(_ index: Int, _ change: (inout JSONObject) -> Void) -> JSON {
        guard case .object(var script) = Self.script, var events = script["events"]?.arrayValue,
            case .object(var event) = events[index]
        else { return Self.script }
        change(&event)
        events[index] = .object(event)
        script["events"] = .array(events)
        return .object(script)
    }

    @Test func aValidScriptNamesTheDeviceAndItsTransport() throws {
        let script = try #require(try load(sip: ["script": Self.script]).sip?.script)
        #expect(script.transport == .tcp && script.events.count == 7 && script.truncated == 0)
        #expect(script.addressOfRecord == "sip:bob@example.org")
        #expect(script.registerExpires == 600)
    }

    @Test func brokenScriptsNameTheField() throws {
        let cases: [(JSON, String)] = [
            (
                ["script": event(1) { $0["direction"] = "up" }],
                "sip.script.events[1].direction: must be sent or received"
            ),
            (
                ["script": event(3) { $0["at_ms"] = 2.0 }],
                "sip.script.events[3].at_ms: must not be before the event above it (5.0 ms)"
            ),
            (["script": event(0) { $0["message"] = "hello" }], "sip.script.events[0].message: is not a SIP message"),
            (
                ["script": event(6) { $0["direction"] = "sent" }],
                "sip.script.events[6].direction: must be received for a closed event"
            ),
            (
                ["script": event(6) { $0["message"] = .string(Self.message) }],
                "sip.script.events[6]: needs message or closed, not both"
            ),
            (
                [
                    "script": [
                        "transport": "tcp",
                        "events": [["at_ms": 0, "direction": "received", "message": .string(Self.message)]],
                    ]
                ],
                "sip.script.events: has no REGISTER sent with a To header"
            ),
            (["script": ["transport": "sctp", "events": []]], "sip.script.transport: must be udp, tcp or tls"),
            (["script": ["transport": "tcp", "events": [], "nonce": "x"]], "sip.script.nonce: is not a script field"),
            (["script": Self.script, "held": []], "sip.held: cannot go with sip.script"),
            (["script": Self.script, "faults": [:]], "sip.faults: cannot go with sip.script"),
            (["script": Self.script, "transport": "udp"], "sip.transport: must be the script's transport (tcp)"),
            (["scripts": Self.script], "sip.scripts: is not a sip field"),
        ]
        for (sip, message) in cases {
            #expect(throws: ReplayError.self, "\(message)") {
                do { _ = try load(sip: sip) } catch let error as ReplayError {
                    #expect(error.description.contains(message), "\(error.description)")
                    throw error
                }
            }
        }
    }

    /// The player, without sockets: the recorded answers go on the live transaction after their recorded delays,
    /// the MESSAGE 3 s after the live REGISTER's arrival, the close after the live answer to it; what differs is a
    /// note, and what the script lacks is unanswered.
    @Test func thePlayerAnswersTheLiveTransactionAtTheRecordedOffsets() throws {
        let script = try SIPScript(json: Self.script)
        var player = SIPScriptPlayer(
            script: script, local: SIPScriptPlayer.Local(transport: .tcp, host: "127.0.0.1", port: 5099))
        let source = SIPEndpoint(host: "127.0.0.1", port: 50000, transport: .tcp)
        let t0 = ContinuousClock.now
        let first = player.received(
            try SIPParser.parse(Self.register(cseq: 7, branch: "z9hG4bKlive1", port: 50000)), at: t0, source: source)
        #expect(first.map(\.event) == [1] && first.first?.due == t0 + .milliseconds(2))
        guard case .reply(.response(let challenge))? = first.first?.action else {
            Issue.record("no challenge: \(first)")
            return
        }
        #expect(challenge.statusCode == 401 && challenge.headers["CSeq"] == "7 REGISTER")
        #expect(challenge.headers["Call-ID"] == "reg-50000")
        #expect(challenge.headers.topVia?.branch == "z9hG4bKlive1" && challenge.headers.topVia?.rport == 50000)
        #expect(challenge.headers["WWW-Authenticate"]?.contains("nonce=\"abc\"") == true)
        #expect(challenge.headers.to?.tag == "srv")

        let t1 = t0 + .milliseconds(10)
        let second = player.received(
            try SIPParser.parse(Self.register(cseq: 8, branch: "z9hG4bKlive2", port: 50000, auth: true)), at: t1,
            source: source)
        #expect(second.map(\.event) == [3, 4])
        #expect(second.map(\.due) == [t1 + .milliseconds(1), t1 + .milliseconds(3001)])
        if case .reply(.response(let ok)) = second[0].action {
            #expect(ok.statusCode == 200 && ok.headers["CSeq"] == "8 REGISTER")
            #expect(ok.headers.contacts.first?.uri.port == 50000 && ok.headers.contacts.first?.expires == 3600)
        } else {
            Issue.record("no 200: \(second)")
        }
        guard case .send(.request(let message)) = second[1].action else {
            Issue.record("no MESSAGE: \(second)")
            return
        }
        #expect(message.uri.port == 50000 && message.headers["Call-ID"] == "m1" && message.body == Array("nse1.x".utf8))
        #expect(message.headers.topVia?.port == 5099 && message.headers.topVia?.branch != "z9hG4bKsrv")

        let t2 = t1 + .milliseconds(3005)
        let answer = message.makeResponse(statusCode: 500)
        let third = player.received(.response(answer), at: t2, source: source)
        #expect(third.map(\.event) == [6] && third.first?.due == t2 + .milliseconds(2))
        if case .close? = third.first?.action {} else { Issue.record("no close: \(third)") }
        #expect(player.notes.contains { $0.contains("answered MESSAGE 500, recorded 200") }, "\(player.notes)")

        let options = try SIPParser.parse(
            "OPTIONS sip:example.org SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:50000;branch=z9hG4bKo\r\n"
                + "From: <sip:bob@example.org>;tag=f\r\nTo: <sip:example.org>\r\nCall-ID: o\r\nCSeq: 1 OPTIONS\r\n\r\n")
        #expect(player.received(options, at: t2, source: source).isEmpty)
        #expect(player.notes.contains { $0.contains("OPTIONS") && $0.contains("not in the script") })
        #expect(player.scheduledCount == 4 && player.playableCount == 4)
    }
}
