import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// What docs/cli.md promises and a hostile sender or a broken setup puts to the test: text output that a sender
/// cannot use to drive the terminal or forge a line, usage errors on one line, a result for every refused payload,
/// and an unusable device that fails the run (78) instead of ending in a quiet fallback.
extension CommandLineTests {
    /// The built full command line, which `nse` hands everything but a plainly valid `run` to.
    var tool: String { TestSupport.binDirectory + "/nse-tool" }

    /// Both ways in: the `nse` front door and `nse-tool` itself.
    func both(_ arguments: [String], stdin: String? = nil) throws -> [(String, TestSupport.Output)] {
        [
            ("nse", try TestSupport.nse(arguments, stdin: stdin)),
            ("nse-tool", try TestSupport.run(tool, arguments, stdin: stdin)),
        ]
    }

    @Test func textFormatEscapesWhatTheSenderControls() throws {
        // ESC sequences (colour, window title, BEL), a C1 CSI, a newline that forges an outcome line, a carriage
        // return that would overwrite one, U+2028, and a bidi override.
        let hostile = JSON.object([
            "type": "message", "from": "sip:mallory@example.org",
            "display_name": .string("\u{1B}[31mMallory\u{1B}]0;pwned\u{07}\u{9B}2J"),
            "text": .string("hi\noutcome:  suppressed\rreason:   forged\u{2028}x\u{202E}gpj.exe\\n"),
        ]).serialized()
        let sealed = try TestSupport.nse(["seal", "--device", device], stdin: hostile)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let payload =
            #"{"aps":{"alert":"x","mutable-content":1},"enc":"\#(sealed.stdout.trimmingCharacters(in: .newlines))"}"#
        for (name, run) in try both(["run", "--device", device, "--format", "text"], stdin: payload) {
            #expect(run.status == 0, "\(name): \(run.stderr)")
            let forbidden: [Unicode.Scalar] = ["\u{1B}", "\u{07}", "\u{9B}", "\r", "\u{2028}", "\u{202E}"]
            #expect(!run.stdout.unicodeScalars.contains(where: forbidden.contains), "\(name)")
            let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.filter { $0.hasPrefix("outcome:") } == ["outcome:  rewritten"], "\(name)")
            #expect(lines.filter { $0.hasPrefix("reason:") }.count == 1, "\(name)")
            #expect(
                lines.contains(#"title:    \u{1B}[31mMallory\u{1B}]0;pwned\u{7}\u{9B}2J"#), "\(name): \(run.stdout)")
            #expect(
                lines.contains(#"body:     hi\noutcome:  suppressed\rreason:   forged\u{2028}x\u{202E}gpj.exe\\n"#),
                "\(name): \(run.stdout)")
            // The JSON form keeps the text exactly (its writer escapes what JSON needs).
        }
        let json = try JSON.parse(try TestSupport.nse(["run", "--device", device], stdin: payload).stdout)
        #expect(json["display"]?["title"]?.stringValue == "\u{1B}[31mMallory\u{1B}]0;pwned\u{07}\u{9B}2J")
    }

    @Test func usageErrorsAreOneLineWithStatus64() throws {
        let cases: [[String]] = [
            ["run", "--no-such-flag"], ["run", "--budget", "-1"], ["run", "--budget", "abc"],
            ["run", "--format", "yaml"],
            ["run", "--push-type", "sms"], ["run", "-", "-"], ["no-such-command"], ["push"],
            ["device", "init"],
            ["device", "set"], ["serve", "--listen"], ["replay", "--jobs", "0", "x"],
            ["serve", "--device", "d", "--open-databases", "0"],
        ]
        for arguments in cases {
            // No stdin: these end before reading it, and writing to a pipe nobody reads would kill the test (SIGPIPE).
            for (name, run) in try both(arguments) {
                #expect(run.status == 64, "\(name) \(arguments): \(run.status) \(run.stderr)")
                #expect(run.stdout.isEmpty, "\(name) \(arguments)")
                let lines = run.stderr.split(separator: "\n")
                #expect(
                    lines.count == 1 && run.stderr.hasPrefix("nse: ") && run.stderr.hasSuffix("\n"),
                    "\(name) \(arguments): \(run.stderr)")
                #expect(!run.stderr.contains("Usage:") && !run.stderr.contains("Help:"), "\(name) \(arguments)")
            }
        }
        let budget = try TestSupport.nse(["run", "--device", device, "--budget", "-1"])
        #expect(budget.stderr == "nse: --budget must be more than 0 and at most 3600 seconds\n")
        // Help is still help: on stdout, status 0.
        for (name, help) in try both(["run", "--help"]) {
            #expect(help.status == 0 && help.stdout.contains("USAGE: nse run") && help.stderr.isEmpty, "\(name)")
        }
    }

    /// Small things a new user meets first (issue #39, defect 7).
    @Test func theFirstMistakesAreExplained() throws {
        // `nse seal | nse run`: the envelope alone is not a payload; the error says where it goes.
        let sealed = try TestSupport.nse(["seal", "--device", device], stdin: plaintext)
        let run = try TestSupport.nse(["run", "--device", device], stdin: sealed.stdout)
        #expect(run.status == 65)
        #expect(run.stderr.contains(#"a payload carries it under "enc""#), "\(run.stderr)")
        #expect(!run.stderr.contains("Lunch"))
        // A range that excludes its lower bound says so.
        let budget = try TestSupport.nse(["run", "--device", device, "--budget", "0"])
        #expect(budget.status == 64 && budget.stderr == "nse: --budget must be more than 0 and at most 3600 seconds\n")
        // --version, from both front doors.
        for (name, version) in try both(["--version"]) {
            #expect(
                version.status == 0 && version.stdout.split(separator: ".").count == 3, "\(name): \(version.stdout)")
        }
    }

    /// A relative `--app-handler` is relative to where the user typed it, not to where `nse run` runs later.
    @Test func aRelativeAppHandlerIsResolvedWhereItWasGiven() throws {
        let apps = root + "/apps"
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        let handler = apps + "/app.sh"
        try TestSupport.write("#!/bin/sh\nexit 0\n", to: handler)
        chmod(handler, 0o755)
        let set = try TestSupport.run(
            "/bin/sh", ["-c", "cd \(apps) && \(TestSupport.nse) device set \(device) --app-handler './app.sh --flag' "])
        #expect(set.status == 0, "\(set.stderr)")
        let config = try JSON.parse(try String(contentsOfFile: device + "/device.json", encoding: .utf8))
        #expect(
            config["voip"]?["app_handler"]?["command"] == .string(handler + " --flag"), "\(config["voip"] ?? .null)")
        let url = try TestSupport.nse(["device", "set", device, "--app-handler", "http://127.0.0.1:9/voip"])
        #expect(url.status == 0)
        let kept = try JSON.parse(try String(contentsOfFile: device + "/device.json", encoding: .utf8))
        #expect(kept["voip"]?["app_handler"]?["url"] == "http://127.0.0.1:9/voip")
    }

    @Test func anOversizePayloadPrintsItsRejectedResult() throws {
        let path = root + "/huge.json"
        try TestSupport.write(
            #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "x", count: 1024 * 1024) + #""}"#, to: path)
        for (name, run) in try both(["run", "--device", device, path]) {
            #expect(run.status == 65, "\(name): \(run.stderr)")
            let result = try JSON.parse(run.stdout)
            #expect(result["outcome"] == "rejected", "\(name)")
            #expect(result["apns_reason"] == "PayloadTooLarge", "\(name)")
            #expect(result["reason"]?.stringValue?.hasPrefix("PayloadTooLarge: ") == true, "\(name)")
            #expect(result["extension"] == .null && result["display"] == .null, "\(name)")
            #expect(result["timings_ms"]?["total"]?.doubleValue != nil, "\(name)")
            #expect(
                run.stderr.split(separator: "\n").count == 1
                    && run.stderr.hasPrefix("nse: payload rejected: PayloadTooLarge"), "\(name)")
        }
        // Just under the read limit, intake measures it and refuses it the same way.
        let justUnder = root + "/large.json"
        try TestSupport.write(
            #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "x", count: 8000) + #""}"#, to: justUnder)
        let run = try TestSupport.nse(["run", "--device", device, "--format", "text", justUnder])
        #expect(
            run.status == 65 && run.stdout.hasPrefix("outcome:  rejected\nreason:   PayloadTooLarge: the payload is "))
    }

    /// Each way a device can be unusable: how to break a fresh one, and the file the error must name.
    static let brokenDevices: [(name: String, file: String, breakIt: @Sendable (String) throws -> Void)] = [
        (
            "key readable by others", "keys/private.key",
            { try CommandLineTests.setMode($0 + "/keys/private.key", 0o644) }
        ),
        (
            "key readable by the group", "keys/private.key",
            { try CommandLineTests.setMode($0 + "/keys/private.key", 0o640) }
        ),
        ("key missing", "keys/private.key", { try FileManager.default.removeItem(atPath: $0 + "/keys/private.key") }),
        (
            "key not base64", "keys/private.key",
            { try CommandLineTests.overwrite($0 + "/keys/private.key", "not a key\n") }
        ),
        (
            "key of the wrong size", "keys/private.key",
            { try CommandLineTests.overwrite($0 + "/keys/private.key", "AAAA\n") }
        ),
        (
            "key unreadable (a folder)", "keys/private.key",
            {
                try FileManager.default.removeItem(atPath: $0 + "/keys/private.key")
                try FileManager.default.createDirectory(
                    atPath: $0 + "/keys/private.key", withIntermediateDirectories: false,
                    attributes: [.posixPermissions: 0o700])
            }
        ),
        (
            "SIP password readable by others", "keys/sip.password",
            { try CommandLineTests.overwrite($0 + "/keys/sip.password", "s3cret", mode: 0o644) }
        ),
        (
            "device.json corrupt", "device.json",
            { try CommandLineTests.overwrite($0 + "/device.json", "{\"format\": 1,", mode: 0o644) }
        ),
        (
            "device.json unreadable (a folder)", "device.json",
            {
                try FileManager.default.removeItem(atPath: $0 + "/device.json")
                try FileManager.default.createDirectory(atPath: $0 + "/device.json", withIntermediateDirectories: false)
            }
        ),
    ]

    static func setMode(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func overwrite(_ path: String, _ text: String, mode: Int = 0o600) throws {
        try TestSupport.write(text, to: path)
        try setMode(path, mode)
    }

    @Test(arguments: 0..<CommandLineTests.brokenDevices.count)
    func anUnusableDeviceIsAConfigurationError(_ index: Int) throws {
        let broken = CommandLineTests.brokenDevices[index]
        let other = root + "/broken"
        let created = try TestSupport.nse(["device", "init", other])
        #expect(created.status == 0, "\(created.stderr)")
        let key = try String(contentsOfFile: other + "/keys/private.key", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let sealed = try TestSupport.nse(["seal", "--device", other], stdin: plaintext).stdout.trimmingCharacters(
            in: .newlines)
        try broken.breakIt(other)
        // From a file, not stdin: nse stops before reading the payload, and writing to a pipe nobody reads would
        // kill the test (SIGPIPE).
        let payload = root + "/payload.json"
        try TestSupport.write(#"{"aps":{"alert":"x","mutable-content":1},"enc":"\#(sealed)"}"#, to: payload)
        for format in ["json", "text"] {
            for (name, run) in try both(["run", "--device", other, "--format", format, payload]) {
                let context = "\(broken.name), \(name), \(format)"
                #expect(run.status == 78, "\(context): \(run.status) \(run.stdout) \(run.stderr)")
                #expect(run.stdout.isEmpty, "\(context): nothing is delivered")
                #expect(
                    run.stderr.split(separator: "\n").count == 1 && run.stderr.hasPrefix("nse: "),
                    "\(context): \(run.stderr)")
                #expect(run.stderr.contains(other + "/" + broken.file), "\(context): \(run.stderr)")
                #expect(!run.stderr.contains(key) && !run.stderr.contains("s3cret"), "\(context)")
            }
        }
        // Nothing ran, so nothing was logged as delivered.
        let log = (try? String(contentsOfFile: other + "/logs/host.jsonl", encoding: .utf8)) ?? ""
        #expect(log.isEmpty, "\(broken.name)")
    }
}
