import NSEJSON
import NSEProtocol
import Testing

@testable import NSEExtension
@testable import NSESIP

/// `info.sip_exchange`: credentials never leave the extension; in `sealed` mode neither does a body the lock screen
/// does not show; the whole stays under the protocol's line.
@Suite struct SIPExchangeTests {
    static let pushCallID = "push-1@example.org"

    static func message(callID: String, type: String, body: String, method: String = "MESSAGE") -> [UInt8] {
        Array(
            ("\(method) sip:bob@127.0.0.1:5062 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5060;branch=z9hG4bK1\r\n"
                + "From: <sip:alice@example.org>;tag=a\r\nTo: <sip:bob@example.org>\r\nCall-ID: \(callID)\r\n"
                + "CSeq: 1 \(method)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                .utf8)
    }

    static func cpim(_ type: String, _ body: String) -> String {
        "From: <sip:alice@example.org>\r\nTo: <sip:bob@example.org>\r\nNS: imdn <urn:ietf:params:imdn>\r\n\r\n"
            + "Content-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    func parsed(_ text: String?) throws -> SIPMessage {
        try SIPParser.parse(try #require(text))
    }

    @Test(arguments: SIPRecordingMode.allCases)
    func credentialsAreRedactedInEitherMode(mode: SIPRecordingMode) throws {
        let register =
            "REGISTER sip:example.org SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5062;branch=z9hG4bK2\r\n"
            + "From: <sip:bob@example.org>;tag=b\r\nTo: <sip:bob@example.org>\r\nCall-ID: r1\r\nCSeq: 2 REGISTER\r\n"
            + "Authorization: Digest username=\"bob\", response=\"0123abcd\"\r\n"
            + "proxy-authorization: Digest username=\"bob\", response=\"4567ef\"\r\nExpires: 600\r\n\r\n"
        let exchange = SIPExchange(mode: mode, callID: Self.pushCallID)
        let text = try #require(exchange.redacted(Array(register.utf8), received: false))
        let message = try parsed(text)
        #expect(message.headers["Authorization"] == "[redacted]")
        #expect(message.headers["Proxy-Authorization"] == "[redacted]")
        #expect(message.headers["Expires"] == "600")
        #expect(!text.contains("0123abcd") && !text.contains("4567ef"))
        #expect(text.hasSuffix("\r\n\r\n"))
    }

    @Test func sealedModeHidesOnlyBodiesTheLockScreenDoesNotShow() throws {
        let exchange = SIPExchange(mode: .sealed, callID: Self.pushCallID)
        let secret = "lunch at the usual place"
        // Another message in plain text: its length only, Content-Length adjusted.
        let other = try parsed(
            exchange.redacted(Self.message(callID: "other", type: "text/plain", body: secret), received: true))
        let marker = "[redacted: \(secret.utf8.count) bytes]"
        #expect(other.body == Array(marker.utf8))
        #expect(other.headers.contentLength == marker.utf8.count)
        // The same wrapped in CPIM is still plain text.
        let wrapped = try #require(
            exchange.redacted(
                Self.message(callID: "other2", type: "message/cpim", body: Self.cpim("text/plain", secret)),
                received: true))
        #expect(!wrapped.contains(secret))
        // The push's own message is what the lock screen shows: kept.
        let own = try parsed(
            exchange.redacted(Self.message(callID: Self.pushCallID, type: "text/plain", body: secret), received: true))
        #expect(own.body == Array(secret.utf8))
        // Sealed envelopes, bare or in CPIM, keep their bodies.
        let envelope = "nse1.k1.c2VhbGVk"
        for (type, body) in [
            ("application/vnd.nse.envelope", envelope), ("text/plain", envelope),
            ("message/cpim", Self.cpim("application/vnd.nse.envelope", envelope)),
        ] {
            let kept = try #require(
                exchange.redacted(Self.message(callID: "other", type: type, body: body), received: true))
            #expect(kept.contains(envelope), "\(type)")
        }
        // What the extension sent, and requests other than MESSAGE, are not message content.
        let sent = try parsed(
            exchange.redacted(Self.message(callID: "imdn", type: "text/plain", body: secret), received: false))
        #expect(sent.body == Array(secret.utf8))
        let notify = try parsed(
            exchange.redacted(
                Self.message(callID: "n", type: "text/plain", body: "state", method: "NOTIFY"), received: true))
        #expect(notify.body == Array("state".utf8))
    }

    @Test func plaintextModeKeepsBodiesButNotBytesThatAreNotText() throws {
        let exchange = SIPExchange(mode: .plaintext, callID: Self.pushCallID)
        let kept = try parsed(
            exchange.redacted(Self.message(callID: "other", type: "text/plain", body: "hello"), received: true))
        #expect(kept.body == Array("hello".utf8))
        var binary = Self.message(callID: "other", type: "application/octet-stream", body: "abcd")
        binary.replaceSubrange((binary.count - 4)..., with: [0xFF, 0xFE, 0x00, 0x80])
        let replaced = try parsed(exchange.redacted(binary, received: true))
        #expect(replaced.body == Array("[redacted: 4 bytes]".utf8))
        #expect(exchange.redacted(Array("not SIP".utf8), received: true) == nil)
    }

    @Test func theDocumentNamesItsEventsAndWhatWasLeftOut() throws {
        let trace = SIPTrace()
        trace.sent(Self.message(callID: "a", type: "text/plain", body: "x"))
        trace.closed()
        let document = SIPExchange(mode: .sealed, callID: Self.pushCallID).json(trace, transport: "tcp")
        #expect(document["transport"] == "tcp")
        #expect(document["truncated"] == nil)
        let events = try #require(document["events"]?.arrayValue)
        #expect(events.count == 2)
        #expect(events[0]["direction"] == "sent" && events[0]["message"]?.stringValue?.hasPrefix("MESSAGE ") == true)
        #expect(events[1]["direction"] == "received" && events[1]["closed"] == true)
        #expect(events[1]["message"] == nil && events[1]["at_ms"]?.doubleValue != nil)
    }

    /// Large messages: the events past 40 KiB are left out and counted with those the trace dropped, so the
    /// content's line stays under the protocol's 64 KiB.
    @Test func aLargeExchangeIsCutAndCounted() throws {
        let trace = SIPTrace()
        let body = String(repeating: "y", count: 9_000)
        for index in 0..<(SIPTrace.maxEvents + 3) {
            trace.sent(Self.message(callID: "c\(index)", type: "text/plain", body: body))
        }
        let document = SIPExchange(mode: .plaintext, callID: Self.pushCallID).json(trace, transport: "udp")
        let kept = try #require(document["events"]?.arrayValue).count
        #expect(kept == 4)
        #expect(document["truncated"] == .int(Int64(SIPTrace.maxEvents - kept + 3)))
        #expect(JSON.object(document).serializedBytes().count <= SIPExchange.maxBytes + 100)
    }
}
