import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// The VoIP call-report path: decrypted call offers escalated by the extension, the app launched to report the
/// call, strikes, and PushKit pushes — through the built `nse`.
@Suite struct VoIPTests {
    let root: String

    init() throws { root = try TestSupport.temporaryDirectory("nse-voip") }

    static let uuid = "6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11"

    func device(_ name: String, _ extra: [String] = [], filtering: Bool = true) throws -> String {
        let path = root + "/" + name
        let created = try TestSupport.nse(["device", "init", path] + (filtering ? ["--filtering"] : []) + extra)
        #expect(created.status == 0, "\(created.stderr)")
        return path
    }

    func callPush(to device: String, sentAt: String? = nil) throws -> String {
        var plaintext =
            #"{"type":"call","call_uuid":"\#(Self.uuid)","from":"sip:bob@example.org","display_name":"Bob","video":true"#
        if let sentAt { plaintext += #","sent_at":"\#(sentAt)""# }
        plaintext += "}"
        let sealed = try TestSupport.nse(["seal", "--device", device], stdin: plaintext)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        return
            #"{"aps":{"alert":{"loc-key":"IC_MSG","loc-args":["Bob"]},"mutable-content":1},"enc":"\#(sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))"}"#
    }

    func run(_ device: String, _ payload: String, _ extra: [String] = []) throws -> JSON {
        let output = try TestSupport.nse(["run", "--device", device] + extra, stdin: payload)
        #expect(output.status == 0, "\(output.stderr)")
        return try JSON.parse(output.stdout)
    }

    func app(_ name: String) -> String { TestSupport.fixtures + "/apps/" + name }

    @Test func encryptedCallRingsWithTheBuiltInApp() throws {
        let bob = try device("bob")
        let result = try run(bob, try callPush(to: bob))
        #expect(result["outcome"] == "suppressed", "\(result["reason"] ?? .null)")
        #expect(result["reason"]?.stringValue?.hasPrefix("voip-escalated") == true)
        #expect(result["display"] == .null)
        #expect(result["call_report"]?["uuid"] == .string(Self.uuid))
        #expect(result["call_report"]?["remote_handle"] == ["type": "generic", "value": "sip:bob@example.org"])
        #expect(result["call_report"]?["localized_caller_name"] == "Bob")
        #expect(result["call_report"]?["has_video"] == true)
        #expect(result["voip"]?["app"]?["outcome"] == "reported")
        let shown = try JSON.parse(try TestSupport.nse(["device", "show", bob]).stdout)
        #expect(shown["voip_state"]?["call_log"]?.arrayValue?.last?["uuid"] == .string(Self.uuid))
    }

    @Test func withoutTheEntitlementTheReportFailsWithCode2() throws {
        let plain = try device("plain", filtering: false)
        let result = try run(plain, try callPush(to: plain))
        #expect(result["outcome"] == "fallback")
        #expect(result["reason"]?.stringValue == "voip-report-failed: missingNotificationFilteringEntitlement (2)")
        #expect(result["voip"]?["error"]?["code"] == 2)
        #expect(result["voip"]?["error"]?["name"] == "missingNotificationFilteringEntitlement")
        #expect(result["display"] == ["title": "Bob", "subtitle": "", "body": "Incoming call"])
        #expect(result["call_report"] == .null)
    }

    @Test func secondReportIsInvalidClientProcess() throws {
        let bob = try device("twice")
        let result = try run(
            bob, #"{"aps":{"alert":"x","mutable-content":1}}"#,
            ["--extension", TestSupport.fixtures + "/extensions/report-twice.py"])
        #expect(result["voip"]?["error"]?["code"] == 1)
        #expect(result["voip"]?["error"]?["name"] == "invalidClientProcess")
        #expect(result["call_report"]?["uuid"] == .string(Self.uuid))
    }

    /// LiveCommunicationKit (iOS 17.4): the extension hands the offer to `ConversationManager`, the app reports a
    /// conversation, and a refusal has no documented domain or code.
    @Test func liveCommunicationKitRoute() throws {
        let bob = try device("lck", ["--voip-framework", "lck"])
        let result = try run(bob, try callPush(to: bob))
        #expect(result["outcome"] == "suppressed", "\(result["reason"] ?? .null)")
        #expect(result["extension"]?["info"]?["reason"] == nil)
        #expect(result["voip"]?["framework"] == "LiveCommunicationKit")
        #expect(result["voip"]?["error"] == .null)
        #expect(result["call_report"]?["framework"] == "LiveCommunicationKit")
        #expect(result["call_report"]?["uuid"] == .string(Self.uuid))
        #expect(result["reason"]?.stringValue?.contains("reported the conversation to LiveCommunicationKit") == true)

        let plain = try device("lck-plain", ["--voip-framework", "livecommunicationkit"], filtering: false)
        let refused = try run(plain, try callPush(to: plain))
        #expect(refused["outcome"] == "fallback")
        #expect(
            refused["reason"]?.stringValue
                == "voip-report-failed: LiveCommunicationKit disallowed the conversation (missingNotificationFilteringEntitlement)"
        )
        #expect(
            refused["voip"]?["error"]
                == [
                    "framework": "LiveCommunicationKit", "domain": .null, "code": .null,
                    "name": "missingNotificationFilteringEntitlement",
                ])

        // The framework needs iOS 17.4: the device cannot be set back to an older release while it uses it.
        let older = try TestSupport.nse(["device", "set", bob, "--ios-version", "17.3"])
        #expect(older.status == 64)
        #expect(older.stderr.contains("LiveCommunicationKit needs iOS 17.4 or later; the device runs iOS 17.3"))
        let back = try TestSupport.nse(["device", "set", bob, "--ios-version", "17.3", "--voip-framework", "callkit"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try run(bob, try callPush(to: bob))["voip"]?["framework"] == "CallKit")

        // An extension that calls the method on a release without it dies as on a missing method.
        let conversation = ["--extension", TestSupport.fixtures + "/extensions/report-conversation.py"]
        let crashed = try run(bob, #"{"aps":{"alert":"x","mutable-content":1}}"#, conversation)
        #expect(crashed["outcome"] == "original")
        #expect(crashed["extension"]?["killed"] == "protocol")
        #expect(crashed["reason"]?.stringValue?.contains("which came with iOS 17.4; the device runs iOS 17.3") == true)
        // An app that reports a conversation where the release has no LiveCommunicationKit has not reported: a strike.
        let handler = root + "/report-conversation.sh"
        try
            ("#!/bin/sh\ncat >/dev/null\n"
            + #"echo '{"uuid":"\#(Self.uuid)","remote_handle":{"type":"generic","value":"sip:bob@example.org"},"framework":"LiveCommunicationKit"}'"#
            + "\n").write(toFile: handler, atomically: true, encoding: .utf8)
        #expect(chmod(handler, 0o755) == 0)
        #expect(try TestSupport.nse(["device", "set", bob, "--app-handler", handler]).status == 0)
        let unreported = try run(bob, try callPush(to: bob))
        #expect(unreported["voip"]?["app"]?["outcome"] == "terminated")
        #expect(unreported["voip"]?["app"]?["strikes"] == 1)
        #expect(
            unreported["voip"]?["app"]?["failure"]?.stringValue?.contains(
                "LiveCommunicationKit needs iOS 17.4 or later; the device runs iOS 17.3") == true)
        #expect(unreported["call_report"] == .null)
        let bad = try TestSupport.nse(["device", "set", bob, "--voip-framework", "telepathy"])
        #expect(
            bad.status == 64
                && bad.stderr.contains("--voip-framework telepathy: expected callkit or livecommunicationkit"))
    }

    @Test func staleOfferIsAMissedCall() throws {
        let bob = try device("stale")
        let result = try run(bob, try callPush(to: bob, sentAt: "2026-01-01T00:00:00Z"))
        #expect(result["outcome"] == "rewritten")
        #expect(result["reason"]?.stringValue?.hasPrefix("stale-offer") == true)
        #expect(result["display"] == ["title": "Missed call", "subtitle": "", "body": "Bob"])
        #expect(result["call_report"] == .null)
        let fresh = try device("fresh", ["--max-offer-age", "3600"])
        let now = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60))
        #expect(try run(fresh, try callPush(to: fresh, sentAt: now))["outcome"] == "suppressed")
    }

    @Test func commandHandlerReportsTheCall() throws {
        let bob = try device("cmd", ["--app-handler", app("report-call.py")])
        let result = try run(bob, try callPush(to: bob))
        #expect(result["outcome"] == "suppressed")
        #expect(result["call_report"]?["localized_caller_name"] == "BOB")
        #expect(result["voip"]?["app"]?["handler"] == "command")
    }

    @Test(arguments: [
        ("hang.sh", "no report within"), ("exit-silently.sh", "without reporting"),
        ("malformed.sh", "malformed report"),
    ])
    func failingAppIsTerminatedWithAStrike(script: String, failure: String) throws {
        let bob = try device("fail-\(script)", ["--app-handler", app(script), "--app-deadline", "0.5"])
        let started = Date()
        let result = try run(bob, try callPush(to: bob))
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(result["call_report"] == .null)
        #expect(result["voip"]?["app"]?["outcome"] == "terminated")
        #expect(
            result["voip"]?["app"]?["failure"]?.stringValue?.contains(failure) == true, "\(result["voip"] ?? .null)")
        #expect(result["voip"]?["app"]?["strikes"] == 1)
        #expect(result["reason"]?.stringValue?.contains("strike 1 of 3") == true)
    }

    @Test func threeStrikesThenRefusalUntilReset() throws {
        let bob = try device("strikes", ["--app-handler", app("exit-silently.sh")])
        let push = try callPush(to: bob)
        for strike in 1...3 {
            #expect(try run(bob, push)["voip"]?["app"]?["strikes"] == .int(Int64(strike)))
        }
        let refused = try run(bob, push)
        #expect(refused["voip"]?["app"]?["outcome"] == "refused")
        #expect(refused["reason"]?.stringValue?.contains("no longer delivered") == true)
        _ = try TestSupport.nse(["device", "set", bob, "--app-handler", "builtin"])
        #expect(try run(bob, push)["voip"]?["app"]?["outcome"] == "refused")
        let reset = try TestSupport.nse(["device", "reset-voip", bob])
        #expect(reset.status == 0)
        #expect(try JSON.parse(reset.stdout)["voip_state"]?["strikes"] == 0)
        #expect(try run(bob, push)["voip"]?["app"]?["outcome"] == "reported")
    }

    /// iOS 26.4's `PKVoIPPushMetadata.mustReport`: told a push need not be reported, the app may let it go without
    /// a strike; told it must, the same app not reporting is terminated with a strike, as before.
    @Test func mustReportFalseLetsTheAppDeclineWithoutAStrike() throws {
        let bob = try device("must-report", ["--app-handler", app("report-when-required.sh")])
        let voip =
            #"{"aps":{"sound":"","loc-key":"IC_MSG","loc-args":["Alice"],"call-id":"m1@example.org"},"from-uri":"sip:alice@example.org","display-name":"Alice"}"#
        let declined = try run(bob, voip, ["--push-type", "voip", "--must-report", "false"])
        #expect(declined["outcome"] == "not-invoked")
        #expect(declined["call_report"] == .null)
        #expect(declined["voip"]?["app"]?["outcome"] == "not-reported")
        #expect(declined["voip"]?["app"]?["must_report"] == false)
        #expect(declined["voip"]?["app"]?["strikes"] == 0)
        #expect(declined["reason"]?.stringValue?.contains("no strike") == true)
        let reported = try run(bob, voip, ["--push-type", "voip"])
        #expect(reported["voip"]?["app"]?["outcome"] == "reported")
        #expect(reported["voip"]?["app"]?["must_report"] == true)
        // An app that never reports gets its strike whenever it had to report, and none when it did not.
        let silent = try device("must-report-silent", ["--app-handler", app("exit-silently.sh")])
        #expect(
            try run(silent, voip, ["--push-type", "voip", "--must-report", "false"])["voip"]?["app"]?["strikes"] == 0)
        #expect(try run(silent, voip, ["--push-type", "voip"])["voip"]?["app"]?["strikes"] == 1)
        let shown = try JSON.parse(try TestSupport.nse(["device", "show", silent]).stdout)
        #expect(shown["voip_state"]?["strikes"] == 1)
        let bad = try TestSupport.nse(
            ["run", "--device", bob, "--push-type", "voip", "--must-report", "maybe"], stdin: voip)
        #expect(bad.status == 64 && bad.stderr == "nse: --must-report must be true or false\n")
    }

    @Test func httpHandler() throws {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: app("http-app.py"))
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let portLine = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let port = try #require(Int(portLine.trimmingCharacters(in: .whitespacesAndNewlines)))
        let good = try device("http", ["--app-handler", "http://127.0.0.1:\(port)/report"])
        let result = try run(good, try callPush(to: good))
        #expect(result["call_report"]?["localized_caller_name"] == "via http")
        #expect(result["voip"]?["app"]?["handler"] == "url")
        let bad = try device("http-fail", ["--app-handler", "http://127.0.0.1:\(port)/fail"])
        let failed = try run(bad, try callPush(to: bad))
        #expect(failed["voip"]?["app"]?["failure"]?.stringValue?.contains("HTTP 500") == true)
    }

    @Test func pushKitPathSkipsTheExtension() throws {
        let bob = try device("pushkit", ["--app-handler", app("report-call.py")])
        let voip =
            #"{"aps":{"sound":"","loc-key":"IC_MSG","loc-args":["Alice"],"call-id":"c1@example.org","uuid":"x","send-time":"2026-11-21 12:00:00"},"from-uri":"sip:alice@example.org","display-name":"Alice","pn_ttl":30,"customPayload":{}}"#
        let result = try run(bob, voip, ["--push-type", "voip"])
        #expect(result["outcome"] == "not-invoked")
        #expect(result["extension"] == .null)
        #expect(result["call_report"]?["localized_caller_name"] == "ALICE")
        #expect(result["voip"]?["path"] == "pushkit")
        let builtIn = try device("pushkit-builtin")
        let report = try run(builtIn, voip, ["--push-type", "voip"])["call_report"]
        #expect(report?["remote_handle"]?["value"] == "sip:alice@example.org")
        #expect(report?["uuid"]?.stringValue?.count == 36)
        #expect(try run(builtIn, voip, ["--push-type", "voip"])["call_report"]?["uuid"] == report?["uuid"])
    }

    @Test func voipPayloadLimitIs5120() throws {
        let bob = try device("limits")
        let pad = String(repeating: "x", count: 4900)
        let payload = #"{"aps":{"alert":"x","mutable-content":1},"pad":"\#(pad)"}"#
        let asVoip = try TestSupport.nse(["run", "--device", bob, "--push-type", "voip"], stdin: payload)
        #expect(asVoip.status == 0)
        let asAlert = try TestSupport.nse(["run", "--device", bob], stdin: payload)
        #expect(asAlert.status == 65 && asAlert.stdout.contains("PayloadTooLarge"))
        let tooBig = try TestSupport.nse(
            ["run", "--device", bob, "--push-type", "voip"], stdin: payload + String(repeating: " ", count: 300))
        #expect(tooBig.status == 65)
    }
}
