import Foundation
import Logging
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

@testable import NSEReplay

/// Issue #35: the reference extension records the SIP exchange of its fetch (`record_sip`), redacted, and
/// `nse replay` plays it back with a scripted peer (`sip.script`) to the same verdict, the server stopped; timing
/// included (a MESSAGE that comes after the budget).
@Suite(.serialized, .timeLimit(.minutes(3))) struct RecordedSIPExchangeTests {
    static let logger = Logger(label: "test.recorded-sip")
    static let pushCallID = "push-1@example.org"
    /// The plain-text message the lock screen never shows: never in a `sealed` recording.
    static let unshown = "the unshown plain text, lunch at 1"

    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-recorded-sip") }

    /// What a recording run left: the device, the push, the result and the exchange in it; and the server, still
    /// running, for a later push.
    struct Recording {
        var device: Device
        var payload: JSON
        var result: JSON
        var exchange: JSON
        var server: SIPServer
    }

    static func payload(callID: String) -> JSON {
        [
            "aps": ["alert": ["loc-key": "IM_MSG", "loc-args": ["Alice"]], "mutable-content": 1],
            "call-id": .string(callID),
        ]
    }

    /// A MESSAGE body as Linphone sends one: wrapped in CPIM, with an IMDN request.
    static func cpim(_ type: String, _ body: String, messageID: String) -> String {
        "From: <sip:alice@example.org>\r\nTo: <sip:bob@example.org>\r\nNS: imdn <urn:ietf:params:imdn>\r\n"
            + "imdn.Message-ID: \(messageID)\r\nimdn.Disposition-Notification: positive-delivery\r\n\r\n"
            + "Content-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    /// Runs one push through the host with `recordSIP = .sealed` against an in-process `SIPServer` (digest on
    /// REGISTER) that holds two sealed messages, one the push's, and one in plain text.
    func record(over transport: SIPTransportKind = .tcp) async throws -> Recording {
        var configuration = SIPServerConfiguration(listeners: [.init(transport: transport, port: 0)])
        configuration.push.enabled = false
        configuration.messageAcceptTimeout = .milliseconds(100)
        configuration.users = ["bob": "s3cret"]
        var caFile: String?
        if transport == .tls {
            let files = try TestSupport.selfSignedCertificate(in: root)
            configuration.tls = .init(certificatePath: files.certificate, keyPath: files.key)
            caFile = files.certificate
        }
        let server = SIPServer(configuration: configuration, logger: Self.logger)
        let address = try #require(try await server.start().first)
        var device = try Device.create(at: root + "/recording-device")
        try device.setSIPAccount(
            aor: "sip:bob@example.org", proxy: address.proxyURI.description, password: "s3cret", expires: 3600,
            caFile: caFile)
        try device.save()

        // The device registered once (the server knows it), then gone: what is sent now is held for it. It
        // registers as the app does, with its `+sip.instance`: the server holds each message for the devices
        // registered when it came, and knows the extension's REGISTER for the same device by that instance.
        let agents = SIPUserAgentConfiguration(tls: .caFile(caFile))
        let bob = SIPUserAgent(configuration: agents, logger: Self.logger)
        let instance = try #require(device.config.sip?.instance)
        let registered = try await bob.register(
            SIPRegistration(
                aor: try SIPURI(parsing: "sip:bob@example.org"), password: "s3cret", proxy: address.proxyURI,
                expires: 3600, contactHeaderParameters: [SIPParameter("+sip.instance", "\"<\(instance)>\"")]))
        await bob.close()
        #expect(registered.statusCode == 200)
        let alice = SIPUserAgent(configuration: agents, logger: Self.logger)
        func send(_ callID: String, _ type: String, _ body: String) async throws {
            var message = SIPOutgoingMessage(
                to: try SIPURI(parsing: "sip:bob@example.org"), from: try SIPURI(parsing: "sip:alice@example.org"),
                proxy: address.proxyURI, contentType: type, body: Array(body.utf8))
            message.callID = callID
            let sent = try await alice.sendMessage(message)
            #expect(sent.statusCode < 300, "\(callID): \(sent.statusCode)")
        }
        let sealed = { (text: String) throws -> String in
            try ReplayCase.seal(
                ["type": "message", "from": "sip:alice@example.org", "text": .string(text), "sent_at": "{{now-60}}"],
                to: device)
        }
        try await send("other-sealed@example.org", "application/vnd.nse.envelope", try sealed("kept for later"))
        try await send("other-plain@example.org", "text/plain;charset=UTF-8", Self.unshown)
        try await send(
            Self.pushCallID, "message/cpim",
            Self.cpim("application/vnd.nse.envelope", try sealed("Lunch at 1?"), messageID: "m1"))
        await alice.close()
        #expect(await server.undeliveredCallIDs().count == 3)

        let payload = Self.payload(callID: Self.pushCallID)
        let result = try await deliver(payload, device: device, budget: 5)
        let exchange = try #require(result["extension"]?["info"]?["sip_exchange"], "\(result.serialized())")
        return Recording(device: device, payload: payload, result: result, exchange: exchange, server: server)
    }

    /// One push through the host, on a thread of its own (the host blocks), recording the SIP exchange.
    func deliver(_ payload: JSON, device: Device, budget: Double) async throws -> JSON {
        var host = NotificationHost(
            device: device, limits: ExtensionLimits(budget: budget, grace: 0.5),
            extensionCommand: [TestSupport.referenceExtension])
        host.recordSIP = .sealed
        let configured = host
        let bytes = payload.serializedBytes()
        return await withCheckedContinuation { done in
            Thread.detachNewThread {
                done.resume(returning: configured.deliver(bytes, pushType: .alert, source: .stdin).json)
            }
        }
    }

    /// Writes a case playing `script`, expecting `expect`, and replays it with the built `nse replay`; returns its
    /// output and the case's log.
    func replay(
        _ name: String, script: JSON, recording: Recording, budget: Double, expect: JSONObject
    ) throws -> (TestSupport.Output, String) {
        let document: JSON = [
            "name": .string(name),
            "device": ["key_file": .string(recording.device.secretKeyPath)],
            "budget": .double(budget),
            "payload": recording.payload,
            "sip": ["script": script],
            "expect": .object(expect),
        ]
        let path = root + "/\(name).json"
        try TestSupport.write(document.serialized(.pretty), to: path)
        let work = root + "/work-\(name)"
        let output = try TestSupport.nse(["replay", path, "--work-dir", work])
        let logs = (FileManager.default.enumerator(atPath: work)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix("case.log") }
            .compactMap { try? String(contentsOfFile: work + "/" + $0, encoding: .utf8) }
        return (output, logs.joined(separator: "\n"))
    }

    /// The reason's code, what a case expects of it (a prefix).
    static func code(_ reason: JSON?) -> String {
        String((reason?.stringValue ?? "").prefix { $0 != ":" })
    }

    @Test(arguments: [SIPTransportKind.udp, .tcp, .tls])
    func aSealedRecordingHidesWhatTheLockScreenDidNotShowAndReplaysToTheSameVerdict(
        transport: SIPTransportKind
    ) async throws {
        let recording = try await record(over: transport)
        await recording.server.shutdown()
        let result = recording.result
        #expect(result["outcome"] == "rewritten", "\(result.serialized())")
        #expect(result["display"]?["body"] == "Lunch at 1?")

        // The exchange: every message as text, the digest and the unshown plain text redacted, sealed ones kept.
        let exchange = recording.exchange
        #expect(exchange["transport"] == .string(transport.rawValue))
        let events = try #require(exchange["events"]?.arrayValue)
        let messages = events.compactMap { $0["message"]?.stringValue }
        #expect(messages.first?.hasPrefix("REGISTER sip:example.org SIP/2.0\r\n") == true)
        #expect(events.first?["direction"] == "sent")
        let text = result.serialized()
        #expect(!text.contains(Self.unshown))
        #expect(!text.contains("response=\\\""), "a digest response left the extension")
        #expect(messages.contains { $0.contains("\r\nAuthorization: [redacted]\r\n") })
        #expect(messages.contains { $0.contains("\r\nWWW-Authenticate: Digest ") })
        let plain = try #require(messages.first { $0.contains("Call-ID: other-plain@example.org\r\n") })
        #expect(plain.hasSuffix("\r\n\r\n[redacted: \(Self.unshown.utf8.count) bytes]"))
        #expect(messages.contains { $0.contains("Call-ID: other-sealed@example.org\r\n") && $0.contains("nse1.") })
        #expect(messages.contains { $0.contains("Call-ID: \(Self.pushCallID)\r\n") && $0.contains("nse1.") })
        let times = events.compactMap { $0["at_ms"]?.doubleValue }
        #expect(times.count == events.count && times == times.sorted())

        // Replayed with the server gone: the scripted peer answers as it did, to the same verdict.
        var expect: JSONObject = [
            "outcome": result["outcome"] ?? .null, "reason": .string(Self.code(result["reason"])),
            "display": result["display"] ?? .null,
        ]
        expect["info"] = ["call_ids_received": result["extension"]?["info"]?["call_ids_received"] ?? .null]
        let name = "recorded-sip-\(transport.rawValue)"
        let (output, log) = try replay(name, script: exchange, recording: recording, budget: 5, expect: expect)
        #expect(output.status == 0, "\(output.stdout)\n\(output.stderr)\n\(log)")
        #expect(output.stdout.contains("PASS  \(name)  rewritten"), "\(output.stdout)")
        #expect(log.contains("sip peer: played "), "\(log)")
    }

    /// The MESSAGE moved 3 s after the REGISTER's 200 (the recording's `at_ms` shifted): with a budget of 1 s the
    /// replay times out as a live push whose message did not come in time did; with 5 s it comes, 3 s late.
    @Test func aMessageThatCameAfterTheBudgetTimesOutAgain() async throws {
        let recording = try await record()
        // The original verdict of a push whose message did not come within 1 s, live against the same server.
        let late = try await deliver(
            Self.payload(callID: "never-held@example.org"), device: recording.device, budget: 1)
        await recording.server.shutdown()
        #expect(late["outcome"] == "fallback", "\(late.serialized())")
        #expect(Self.code(late["reason"]) == "not-found", "\(late.serialized())")

        var events = try #require(recording.exchange["events"]?.arrayValue)
        let registered = try #require(
            events.firstIndex {
                $0["direction"] == "received" && $0["message"]?.stringValue?.hasPrefix("SIP/2.0 200") == true
                    && $0["message"]?.stringValue?.contains(" REGISTER\r\n") == true
            })
        for index in events.indices where index > registered {
            guard case .object(var event) = events[index], let at = event["at_ms"]?.doubleValue else { continue }
            event["at_ms"] = .double(at + 3000)
            events[index] = .object(event)
        }
        guard case .object(var shifted) = recording.exchange else { return }
        shifted["events"] = .array(events)

        let timedOut: JSONObject = [
            "outcome": late["outcome"] ?? .null, "reason": .string(Self.code(late["reason"])),
            "display": late["display"] ?? .null,
        ]
        let (short, shortLog) = try replay(
            "late-message-1s", script: .object(shifted), recording: recording, budget: 1, expect: timedOut)
        #expect(short.status == 0, "\(short.stdout)\n\(short.stderr)\n\(shortLog)")

        let rewritten: JSONObject = [
            "outcome": "rewritten", "display": recording.result["display"] ?? .null,
        ]
        let (long, longLog) = try replay(
            "late-message-5s", script: .object(shifted), recording: recording, budget: 5, expect: rewritten)
        #expect(long.status == 0, "\(long.stdout)\n\(long.stderr)\n\(longLog)")
        // It came at its recorded offset, not at once: the fetch found it about 3 s in.
        let found = try Self.result(in: longLog)?["extension"]?["info"]?["sip_timings"]?["message_ms"]?.doubleValue
        #expect((found ?? 0) > 2900 && (found ?? .infinity) < 4500, "\(longLog)")
    }

    /// The result document a case's log ends with (`result: {…}`).
    static func result(in log: String) throws -> JSON? {
        guard let start = log.range(of: "\nresult: ") else { return nil }
        return try JSON.parse(String(log[start.upperBound...]))
    }
}
