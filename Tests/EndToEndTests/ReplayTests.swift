import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse replay` as a CI job uses it: progress lines, the closing line, JUnit, failures with a diff, broken cases,
/// and --update.
@Suite struct ReplayTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-replay") }

    func write(_ name: String, _ json: String) throws -> String {
        let path = root + "/" + name
        try TestSupport.write(json, to: path)
        return path
    }

    let passing =
        #"{"name":"passes","payload":{"aps":{"alert":"hi"}},"expect":{"outcome":"not-invoked","display":{"title":"","subtitle":"","body":"hi"}}}"#
    let failing =
        #"{"name":"fails","payload":{"aps":{"alert":"hi","mutable-content":1},"enc":"x"},"expect":{"outcome":"rewritten","display":{"title":"Alice","subtitle":"","body":"hi"}}}"#

    @Test func passingAndFailingCasesWithJUnit() throws {
        _ = try write("a.json", passing)
        _ = try write("b.json", failing)
        let junit = root + "/junit.xml"
        let output = try TestSupport.nse(["replay", root, "--jobs", "2", "--junit", junit])
        #expect(output.status == 1)
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.last == "1 passed, 1 failed")
        #expect(lines.contains { $0.hasPrefix("PASS  passes  not-invoked") })
        #expect(lines.contains { $0.hasPrefix("FAIL  fails  fallback") })
        #expect(output.stdout.contains("outcome: expected \"rewritten\", got \"fallback\""))
        #expect(output.stdout.contains("full log: "))
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("tests=\"2\" failures=\"1\""))
        #expect(xml.contains("<failure message=\"outcome: expected"))
    }

    /// A replay's work folder (tens of MB of devices and logs) goes with it, pass or fail, unless asked to stay
    /// (issue #39, defect 4). `NSE_KEEP_TEST_DIRS` keeps it too, so the test needs it unset.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NSE_KEEP_TEST_DIRS"] == nil))
    func theWorkFolderIsRemovedUnlessKept() throws {
        _ = try write("a.json", passing)
        _ = try write("b.json", failing)
        let temporary = root + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let removed = try TestSupport.nse(
            ["replay", root + "/a.json", root + "/b.json"], environment: ["TMPDIR": temporary])
        #expect(removed.status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
        #expect(removed.stdout.contains("full log: removed with the run (--keep keeps it)"))
        let kept = try TestSupport.nse(
            ["replay", "--keep", root + "/a.json", root + "/b.json"], environment: ["TMPDIR": temporary])
        #expect(kept.status == 1)
        let folders = try FileManager.default.contentsOfDirectory(atPath: temporary)
        #expect(folders.count == 1 && folders[0].hasPrefix("nse-replay-"))
        #expect(kept.stderr.contains("cases kept in \(temporary)/\(folders.first ?? "")"))
        let log = try #require(kept.stdout.split(separator: "\n").first { $0.contains("full log: ") })
        let path = String(log.split(separator: " ").last ?? "")
        #expect(FileManager.default.fileExists(atPath: path), "\(path)")
    }

    /// An expectation of the wrong kind would check nothing and let any result pass: it is a broken case
    /// (issue #39). And `--update` keeps enough of a reason to tell failures apart (a 503 from a 403).
    @Test func expectationsOfTheWrongKindAreBrokenCasesAndUpdateKeepsDistinctReasons() throws {
        let cases: [(String, String)] = [
            (#""reason":5"#, "expect.reason: must be a string, not a number"),
            (#""display":"x""#, "expect.display: must be an object or null, not a string"),
            (#""call_timeline":"ringing""#, "expect.call_timeline: must be an array of step names, not a string"),
            (#""info":true"#, "expect.info: must be an object of dotted paths and their values, not a boolean"),
            (#""outcomes":"x""#, "expect.outcomes: is not something a case can expect"),
        ]
        for (index, (member, message)) in cases.enumerated() {
            let path = try write(
                "wrong-\(index).json",
                #"{"payload":{"aps":{"alert":"hi"}},"expect":{"outcome":"not-invoked",\#(member)}}"#)
            let output = try TestSupport.nse(["replay", path])
            #expect(output.status == 65, "\(member): \(output.stdout)")
            #expect(output.stdout.contains("wrong-\(index).json: \(message)"), "\(output.stdout)")
        }
        let refused = try write(
            "refused.json",
            #"{"sip":{"transport":"tcp","register":false,"faults":{"answer_503":true}},"payload":{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"call-id":"x@y"},"expect":{"outcome":"rewritten"}}"#
        )
        let updated = try TestSupport.nse(["replay", "--update", refused])
        #expect(updated.stdout.contains("expectations re-recorded: "), "\(updated.stdout)")
        let document = try JSON.parse(try String(contentsOfFile: refused, encoding: .utf8))
        #expect(document["expect"]?["reason"] == "sip-register-failed: the registrar answered 503", "\(document)")
    }

    @Test func brokenCasesNameTheFileAndField() throws {
        let bad = try write("bad.json", #"{"payload":{"aps":{}},"expect":{"outcome":"rewritten"},"budget":"soon"}"#)
        let output = try TestSupport.nse(["replay", bad])
        #expect(output.status == 65)
        #expect(output.stdout.contains("ERROR"))
        #expect(output.stdout.contains("bad.json: budget: must be a number"))
        let noExpect = try write("noexpect.json", #"{"payload":{"aps":{}}}"#)
        #expect(try TestSupport.nse(["replay", noExpect]).stdout.contains("noexpect.json: expect: is required"))
        let notJSON = try write("notjson.json", "{")
        #expect(try TestSupport.nse(["replay", notJSON]).stdout.contains("notjson.json: "))
        #expect(try TestSupport.nse(["replay", root + "/missing"]).status == 66)
        // A call the case places, and what the device's user does with it.
        for (fields, message) in [
            (#""sip":{"call":{"from":"sip:a@b"}}"#, "sip.call.call_id: is required"),
            (#""sip":{"call":{"call_id":"c","push_when":"later"}}"#, "sip.call.push_when: must be held or cancelled"),
            (#""sip":{"call":{"call_id":"c","ring":1}}"#, "sip.call.ring: is not a call field"),
            (#""sip":{"call":{"call_id":"c","timeout":0}}"#, "sip.call.timeout: must be from 0.1 to 60 seconds"),
            (
                #""device":{"call":{"action":"maybe"}}"#,
                #""device.call.action" must be answer, decline, busy, ignore or answer-before-invite"#
            ),
        ] {
            let text = "{" + fields + #","payload":{"aps":{}},"expect":{"outcome":"not-invoked"}}"#
            let file = try write("call-\(UUID().uuidString.prefix(6)).json", text)
            let output = try TestSupport.nse(["replay", file])
            #expect(output.status == 65)
            #expect(output.stdout.contains(message), "\(output.stdout)")
        }
    }

    /// A case naming an extension's sources: built before the run; sources that do not build, or a case naming both
    /// kinds of extension, are broken cases with their field.
    @Test func extensionSourcesAreBuiltOrTheCaseIsBroken() throws {
        let sources = root + "/extension"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        let template = TestSupport.fixtures + "/sdk-extensions/template"
        for name in ["NotificationService.swift", "Info.plist"] {
            try FileManager.default.copyItem(atPath: template + "/" + name, toPath: sources + "/" + name)
        }
        let built = try write(
            "built.json",
            #"{"extension_source":"extension","payload":{"aps":{"alert":{"title":"A","body":"b"},"mutable-content":1}},"expect":{"outcome":"rewritten","display":{"title":"A [modified]","subtitle":"","body":"b"}}}"#
        )
        let cache = ["NSE_CACHE_DIR": root + "/cache"]
        let passing = try TestSupport.nse(["replay", built], environment: cache)
        #expect(passing.status == 0, "\(passing.stdout)\(passing.stderr)")
        #expect(passing.stdout.contains("PASS  built"), "\(passing.stdout)")

        try TestSupport.write("class NotificationService: NoSuchType {}\n", to: sources + "/NotificationService.swift")
        let broken = try TestSupport.nse(["replay", built], environment: cache)
        #expect(broken.status == 65, "\(broken.stdout)")
        #expect(
            broken.stdout.contains("built.json: extension_source: swiftc could not build the extension"),
            "\(broken.stdout)")
        #expect(broken.stderr.contains("error:"), "the compiler's own messages: \(broken.stderr)")

        let both = try write(
            "both.json",
            #"{"extension":"x.sh","extension_source":"extension","payload":{"aps":{}},"expect":{"outcome":"not-invoked"}}"#
        )
        #expect(
            try TestSupport.nse(["replay", both]).stdout.contains(
                "both.json: extension_source: give extension or extension_source, not both"))
        let entitlements = try write(
            "entitlements.json",
            #"{"device":{"entitlements":"none.entitlements"},"payload":{"aps":{}},"expect":{"outcome":"not-invoked"}}"#
        )
        let missing = try TestSupport.nse(["replay", entitlements])
        #expect(missing.status == 65)
        #expect(missing.stdout.contains("entitlements.json: device.entitlements: "), "\(missing.stdout)")
    }

    @Test func updateReRecordsExpectations() throws {
        let path = try write("rerecord.json", failing)
        let updated = try TestSupport.nse(["replay", path, "--update"])
        #expect(updated.status == 0)
        #expect(updated.stdout.contains("expectations re-recorded: fails"))
        let replayCase = try JSON.parse(try String(contentsOfFile: path, encoding: .utf8))
        #expect(replayCase["expect"]?["outcome"] == "fallback")
        // Up to its first word with a digit (here the format tag it names).
        #expect(
            replayCase["expect"]?["reason"] == "envelope-malformed: the envelope does not start with a format tag like")
        #expect(try TestSupport.nse(["replay", path]).status == 0)
        #expect(try TestSupport.nse(["replay", path, "--update"]).stdout.contains("no expectation changed"))
    }

    @Test func filterAndJSONFormat() throws {
        _ = try write("one.json", passing)
        _ = try write("two.json", failing)
        let output = try TestSupport.nse(["replay", root, "--filter", "one", "--format", "json"])
        #expect(output.status == 0)
        let results = try JSON.parse(output.stdout, options: JSONParseOptions(requireObject: false))
        #expect(results.arrayValue?.count == 1)
        #expect(results.arrayValue?.first?["passed"] == true)
    }

    @Test func foldersWithoutCasesAreSkippedWithOneLine() throws {
        try FileManager.default.createDirectory(atPath: root + "/cases", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/plaintexts", withIntermediateDirectories: true)
        _ = try write("cases/a.json", passing)
        _ = try write("plaintexts/alice.json", #"{"type":"message","text":"hi"}"#)
        _ = try write("plaintexts/broken.json", "{")
        let output = try TestSupport.nse(["replay", root])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").last == "1 passed, 0 failed")
        #expect(output.stderr == "\(root)/plaintexts: skipped, none of its 2 .json files is a case (no \"expect\")\n")
        // A folder with no case at all is one clear error line, not a run of broken cases.
        let none = try TestSupport.nse(["replay", root + "/plaintexts"])
        #expect(none.status == 66)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr.split(separator: "\n").count == 1)
        #expect(none.stderr.contains("plaintexts: holds no case"))
        // In a folder that holds cases, every .json is one: a broken case fails instead of being skipped.
        _ = try write("cases/broken.json", "{")
        let broken = try TestSupport.nse(["replay", root + "/cases"])
        #expect(broken.status == 65)
        #expect(broken.stdout.contains("broken.json: "))
    }

    @Test func theWholeFixturesFolderPasses() throws {
        // 152 cases, some waiting out a budget, and the SDK cases' extensions built when the cache is cold: over a
        // minute on a busy 2-core machine.
        let output = try TestSupport.run(TestSupport.nse, ["replay", TestSupport.fixtures], timeout: 300)
        #expect(
            output.status == 0,
            "\(output.stdout.split(separator: "\n").filter { !$0.hasPrefix("PASS") }.joined(separator: "\n"))")
        let cases = try FileManager.default.subpathsOfDirectory(atPath: TestSupport.fixtures + "/cases").filter {
            $0.hasSuffix(".json")
        }
        #expect(output.stdout.split(separator: "\n").last.map(String.init) == "\(cases.count) passed, 0 failed")
        #expect(output.stderr.contains("plaintexts: skipped"))
    }
}
