import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// The `nse` command line as a user drives it: stdin, exit statuses, one-line errors, text output.
@Suite struct CommandLineTests {
    let root: String
    let device: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-cli")
        device = root + "/bob"
        let created = try TestSupport.nse([
            "device", "init", device, "--bundle-id", "org.example.app", "--team-id", "ABCDE12345", "--filtering",
        ])
        #expect(created.status == 0, "\(created.stderr)")
    }

    let plaintext = #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Lunch at 1?"}"#

    @Test func theIssueWalkthroughFromStdin() throws {
        let sealed = try TestSupport.nse(["seal", "--device", device], stdin: plaintext)
        #expect(sealed.status == 0)
        let envelope = sealed.stdout.trimmingCharacters(in: .newlines)
        #expect(!envelope.contains("\n") && envelope.hasPrefix("nse1."))
        #expect(!sealed.stdout.contains("Lunch"))
        let payload = #"{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"\#(envelope)"}"#
        for arguments in [["run", "--device", device], ["run", "--device", device, "-"]] {
            let run = try TestSupport.nse(arguments, stdin: payload)
            #expect(run.status == 0)
            let result = try JSON.parse(run.stdout)
            #expect(result["outcome"] == "rewritten")
            #expect(result["display"] == ["title": "Alice", "subtitle": "", "body": "Lunch at 1?"])
            #expect(result["extension"]?["exit"]?["code"] == 0)
            #expect((result["extension"]?["peak_rss_kb"]?.intValue ?? 0) > 0)
            #expect(result["call_report"] == .null)
            #expect(result["timings_ms"]?["total"]?.doubleValue != nil)
            #expect(!run.stderr.contains("Lunch"))
        }
        let text = try TestSupport.nse(["run", "--device", device, "--format", "text"], stdin: payload)
        #expect(text.stdout.contains("outcome:  rewritten") && text.stdout.contains("body:     Lunch at 1?"))
    }

    /// Show Previews: iOS's default shows a notification's content only while the phone is unlocked; locked, the
    /// lock screen shows the app and "Notification" (`preview_hidden`); `always` shows it locked too, `never` never.
    @Test func showPreviewsHidesTheContentOnALockedPhone() throws {
        let payload = #"{"aps":{"alert":{"title":"Alice","body":"Lunch at 1?"}}}"#
        func run() throws -> JSON {
            let run = try TestSupport.nse(["run", "--device", device], stdin: payload)
            #expect(run.status == 0, "\(run.stderr)")
            return try JSON.parse(run.stdout)
        }
        func set(_ options: [String]) throws {
            let set = try TestSupport.nse(["device", "set", device] + options)
            #expect(set.status == 0, "\(set.stderr)")
        }
        #expect(try run()["preview_hidden"] == nil)
        try set(["--lock-state", "locked"])
        let locked = try run()
        #expect(locked["preview_hidden"] == true && locked["display"]?["body"] == "Lunch at 1?", "\(locked)")
        let text = try TestSupport.nse(["run", "--device", device, "--format", "text"], stdin: payload)
        #expect(text.stdout.contains(#"preview:  hidden (the lock screen shows "Notification")"#), "\(text.stdout)")
        try set(["--show-previews", "always"])
        #expect(try run()["preview_hidden"] == nil)
        try set(["--show-previews", "never", "--lock-state", "unlocked"])
        #expect(try run()["preview_hidden"] == true)
        let shown = try TestSupport.nse(["device", "show", device])
        #expect(try JSON.parse(shown.stdout)["show_previews"] == "never")
        let bad = try TestSupport.nse(["device", "set", device, "--show-previews", "sometimes"])
        #expect(
            bad.status == 64
                && bad.stderr.contains("--show-previews sometimes: expected always, when-unlocked or never"))
    }

    /// The app's registered category (`aps.category`) gives the notification its buttons (`actions`, in order, with
    /// their options by name); with the content hidden by Show Previews, the category's placeholder (its `%u` the
    /// thread's count) and, as its options ask, the title. A category the app never registered: a warning.
    @Test func theRegisteredCategoryGivesActionsAndTheHiddenPreviewsPlaceholder() throws {
        // As UNUserNotificationCenter.setNotificationCategories writes it (docs/device.md).
        try TestSupport.write(
            #"""
            {"categories":[{"identifier":"MESSAGE","intent_identifiers":[],"options":4,
            "hidden_previews_body_placeholder":"%u new messages","actions":[
            {"identifier":"reply","title":"Reply","options":0,"text_input":{"button_title":"Send","placeholder":"Message"}},
            {"identifier":"read","title":"Mark as Read","options":1},
            {"identifier":"delete","title":"Delete","options":2}]}]}
            """#, to: device + "/notification-categories.json")
        let payload = #"{"aps":{"alert":{"title":"Alice","body":"Lunch at 1?"},"category":"MESSAGE","thread-id":"t1"}}"#
        func run(_ payload: String = payload, format: [String] = []) throws -> TestSupport.Output {
            let run = try TestSupport.nse(["run", "--device", device] + format, stdin: payload)
            #expect(run.status == 0, "\(run.stderr)")
            return run
        }
        let unlocked = try JSON.parse(try run().stdout)
        let actions = try #require(unlocked["actions"]?.arrayValue)
        try #require(actions.count == 3)
        #expect(
            unlocked["actions"]?.arrayValue?.compactMap { $0["identifier"]?.stringValue } == [
                "reply", "read", "delete",
            ])
        #expect(actions[0]["text_input"]?["button_title"] == "Send")
        #expect(actions[1]["options"] == ["authentication-required"])
        #expect(actions[2]["options"] == ["destructive"])
        #expect(unlocked["hidden_preview"] == nil && unlocked["warnings"] == [], "\(unlocked)")
        let set = try TestSupport.nse(["device", "set", device, "--lock-state", "locked"])
        #expect(set.status == 0, "\(set.stderr)")
        let locked = try JSON.parse(try run().stdout)
        #expect(locked["hidden_preview"] == ["title": "Alice", "body": "2 new messages"], "\(locked)")
        let text = try run(format: ["--format", "text"]).stdout
        #expect(text.contains(#"preview:  hidden (the lock screen shows "3 new messages")"#), "\(text)")
        #expect(text.contains("action:   Delete (destructive)"), "\(text)")
        #expect(text.contains("action:   Reply (text input)"), "\(text)")
        // Without a category, or with one the app did not register (a warning: it registered others): "Notification",
        // no actions.
        let plain = try JSON.parse(try run(#"{"aps":{"alert":{"title":"Alice","body":"Hi"}}}"#).stdout)
        #expect(plain["hidden_preview"] == ["body": "Notification"] && plain["actions"] == nil, "\(plain)")
        let unknown = try JSON.parse(
            try run(#"{"aps":{"alert":{"title":"Alice","body":"Hi"},"category":"NOPE"}}"#).stdout)
        #expect(unknown["actions"] == nil && unknown["hidden_preview"] == ["body": "Notification"])
        #expect(
            unknown["warnings"]?.arrayValue?.contains {
                $0.stringValue?.hasPrefix("aps.category names no category") == true
            }
                == true, "\(unknown)")
        // A device whose app registered none (its launch never simulated): nothing to compare with, no warning.
        let fresh = root + "/no-categories"
        #expect(try TestSupport.nse(["device", "init", fresh]).status == 0)
        let none = try TestSupport.nse(["run", "--device", fresh], stdin: payload)
        let noneResult = try JSON.parse(none.stdout)
        #expect(noneResult["warnings"] == [] && noneResult["actions"] == nil, "\(noneResult)")
    }

    /// Several payloads are pushes to the same device in order: one compact JSON result per line; a rejected one
    /// is printed like the others and makes the status 65; a missing file stops the sequence with 66.
    @Test func aSequenceOfPayloads() throws {
        let sealed = try TestSupport.nse(["seal", "--device", device], stdin: plaintext)
        let envelope = sealed.stdout.trimmingCharacters(in: .newlines)
        let first = root + "/first.json"
        let plain = root + "/plain.json"
        let broken = root + "/broken.json"
        try TestSupport.write(
            #"{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"\#(envelope)"}"#, to: first)
        try TestSupport.write(#"{"aps":{"alert":"plain"}}"#, to: plain)
        try TestSupport.write("[", to: broken)
        let both = try TestSupport.nse(["run", "--device", device, first, plain])
        #expect(both.status == 0, "\(both.stderr)")
        let lines = both.stdout.split(separator: "\n").map(String.init)
        #expect(try lines.map { try JSON.parse($0)["outcome"] } == ["rewritten", "not-invoked"])
        let withBroken = try TestSupport.nse(["run", "--device", device, first, broken, plain])
        #expect(withBroken.status == 65)
        #expect(withBroken.stdout.split(separator: "\n").count == 3)
        #expect(withBroken.stderr.hasPrefix("nse: payload rejected: MalformedPayload"))
        let missing = try TestSupport.nse(["run", "--device", device, first, root + "/missing.json", plain])
        #expect(missing.status == 66)
        #expect(missing.stdout.split(separator: "\n").count == 1)
        let twice = try TestSupport.nse(["run", "--device", device, "-", "-"], stdin: "{}")
        #expect(twice.status == 64 && twice.stderr == "nse: stdin (-) can be given once\n")
    }

    /// The call settings `nse device set` takes: a bad one is one line naming the option and what it must be.
    @Test func callSettingsOutsideTheirRangeAreOneLine() throws {
        for (options, message) in [
            (
                ["--call-action", "maybe"],
                "--call-action must be answer, decline, busy, ignore or answer-before-invite"
            ),
            (["--answer-after", "61"], "--answer-after must be between 0 and 60 seconds"),
            (["--invite-timeout", "0"], "--invite-timeout must be between 0.1 and 60 seconds"),
            (["--hangup-after", "3601"], "--hangup-after must be between 0 and 3600 seconds"),
        ] {
            let set = try TestSupport.nse(["device", "set", device] + options)
            #expect(set.status == 64)
            #expect(set.stderr == "nse: \(message)\n")
        }
    }

    @Test func sealToAPublicKey() throws {
        let show = try JSON.parse(try TestSupport.nse(["device", "show", device]).stdout)
        let key = try #require(show["public_key"]?.stringValue)
        let sealed = try TestSupport.nse(["seal", "--to", key], stdin: plaintext)
        #expect(sealed.status == 0)
        let payload =
            #"{"aps":{"alert":"x","mutable-content":1},"enc":"\#(sealed.stdout.trimmingCharacters(in: .newlines))"}"#
        let run = try TestSupport.nse(["run", "--device", device], stdin: payload)
        #expect(try JSON.parse(run.stdout)["outcome"] == "rewritten")
    }

    @Test func sealRefusesPlaintextOutsideTheSchemaUnlessRaw() throws {
        let refused = try TestSupport.nse(["seal", "--device", device], stdin: #"{"type":"message"}"#)
        #expect(refused.status == 65 && refused.stderr.contains("plaintext-schema"))
        let raw = try TestSupport.nse(["seal", "--device", device, "--raw"], stdin: "anything")
        #expect(raw.status == 0 && raw.stdout.hasPrefix("nse1."))
        let badKey = try TestSupport.nse(["seal", "--to", "nope"])  // refused before stdin is read
        #expect(badKey.status == 64 && badKey.stderr.hasPrefix("nse: --to"))
    }

    @Test func exitStatusesAreDocumented() throws {
        let usage = try TestSupport.nse(["run", "--device", device, "--budget", "-1"])
        #expect(usage.status == 64 && usage.stderr == "nse: --budget must be more than 0 and at most 3600 seconds\n")
        let unknown = try TestSupport.nse(["run", "--no-such-flag"])
        #expect(unknown.status == 64)
        let missing = try TestSupport.nse(["run", "--device", device, root + "/nope.json"])
        #expect(missing.status == 66 && missing.stderr.contains("nope.json"))
        let noDevice = try TestSupport.nse(["run", "--device", root + "/ghost"])
        #expect(noDevice.status == 78 && noDevice.stderr.contains("device init"))
        let rejected = try TestSupport.nse(["run", "--device", device], stdin: "{\"aps\":")
        #expect(rejected.status == 65)
        #expect(try JSON.parse(rejected.stdout)["outcome"] == "rejected")
        #expect(rejected.stderr.split(separator: "\n").count == 1 && rejected.stderr.contains("line 1"))
        let badInit = try TestSupport.nse(["device", "init", root + "/x", "--team-id", "bad"])
        #expect(badInit.status == 64 && badInit.stderr.contains("team id"))
        let again = try TestSupport.nse(["device", "init", device])
        #expect(again.status == 78)
    }

    @Test func insecureKeyIsRefusedWithoutLeakingIt() throws {
        let other = root + "/leaky"
        _ = try TestSupport.nse(["device", "init", other])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: other + "/keys/private.key")
        let key = try String(contentsOfFile: other + "/keys/private.key", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let sealed = try TestSupport.nse(["seal", "--device", other], stdin: plaintext).stdout.trimmingCharacters(
            in: .newlines)
        let payload = root + "/leaky.json"  // not stdin: nse ends before reading it (a pipe nobody reads: SIGPIPE)
        try TestSupport.write(#"{"aps":{"alert":"x","mutable-content":1},"enc":"\#(sealed)"}"#, to: payload)
        let run = try TestSupport.nse(["run", "--device", other, payload])
        // A configuration error (78), not a quiet fallback: nothing is delivered (more in CommandLinePromisesTests).
        #expect(run.status == 78 && run.stdout.isEmpty)
        #expect(
            run.stderr
                == "nse: \(other)/keys/private.key has mode 644; refusing a private key that others can access (chmod 600 it)\n"
        )
        #expect(!run.stdout.contains(key) && !run.stderr.contains(key))
        let show = try TestSupport.nse(["device", "show", other])
        #expect(!show.stdout.contains(key))
    }

    @Test func defaultDeviceIsCreatedOnFirstUse() throws {
        let data = root + "/xdg"
        let run = try TestSupport.nse(
            ["run"], stdin: #"{"aps":{"alert":"hello","mutable-content":1}}"#,
            environment: ["XDG_DATA_HOME": data, "NSE_DEVICE": ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: data + "/nse/device/device.json"))
        let explicit = root + "/envdevice"
        let viaEnv = try TestSupport.nse(["device", "show"], environment: ["NSE_DEVICE": explicit])
        #expect(viaEnv.status == 0 && viaEnv.stdout.contains(explicit))
    }

    @Test func userExtensionUnderTheSameRules() throws {
        let run = try TestSupport.nse(
            [
                "run", "--device", device, "--budget", "0.2", "--grace", "0.1", "--extension",
                TestSupport.fixtures + "/extensions/hang.sh",
            ],
            stdin: #"{"aps":{"alert":"original text","mutable-content":1}}"#)
        let result = try JSON.parse(run.stdout)
        #expect(result["outcome"] == "original")
        #expect(result["display"]?["body"] == "original text")
        #expect(result["extension"]?["killed"] == "budget")
        let shout = try TestSupport.nse(
            ["run", "--device", device, "--extension", TestSupport.packageRoot + "/docs/examples/shout_extension.py"],
            stdin: #"{"aps":{"alert":"hello","mutable-content":1}}"#)
        #expect(try JSON.parse(shout.stdout)["display"]?["body"] == "HELLO")
    }

    @Test func memoryLimitOption() throws {
        let run = try TestSupport.nse(
            ["run", "--device", device, "--memory-limit", "1"],
            stdin: #"{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"x"}"#)
        let result = try JSON.parse(run.stdout)
        #expect(result["outcome"] == "original")
        #expect(result["extension"]?["killed"] == "memory")
    }
}

@Suite struct DeviceSIPAccountTests {
    @Test func sipAccountIsStoredWithThePasswordApart() throws {
        let root = try TestSupport.temporaryDirectory("nse-sip")
        let created = try TestSupport.nse([
            "device", "init", root + "/bob", "--sip-account", "sip:bob@example.org", "--sip-password", "s3cret",
            "--sip-proxy", "sip:127.0.0.1:5070;transport=tcp",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let shown = try JSON.parse(created.stdout)
        #expect(shown["sip"]?["aor"] == "sip:bob@example.org")
        #expect(shown["sip"]?["proxy"] == "sip:127.0.0.1:5070;transport=tcp")
        #expect(shown["sip"]?["instance"]?.stringValue?.hasPrefix("urn:uuid:") == true)
        #expect(!created.stdout.contains("s3cret"))
        let mode =
            try FileManager.default.attributesOfItem(atPath: root + "/bob/keys/sip.password")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let changed = try TestSupport.nse(["device", "set", root + "/bob", "--sip-proxy", "sips:127.0.0.1:5071"])
        #expect(try JSON.parse(changed.stdout)["sip"]?["proxy"] == "sips:127.0.0.1:5071")
        #expect(try JSON.parse(changed.stdout)["sip"]?["instance"] == shown["sip"]?["instance"])
        let bad = try TestSupport.nse(["device", "set", root + "/bob", "--sip-proxy", "sip:h;transport=sctp"])
        #expect(bad.status == 64 && bad.stderr.contains("transport"))
        let removed = try TestSupport.nse(["device", "set", root + "/bob", "--no-sip-account"])
        #expect(try JSON.parse(removed.stdout)["sip"] == .null)
        #expect(!FileManager.default.fileExists(atPath: root + "/bob/keys/sip.password"))
    }
}
