import Foundation
import NSEDevice
import NSEJSON
import NSEReplay
import NSETestSupport
import Testing

/// The built `nse run` (the front door, as a process) on every case of fixtures/cases that needs nothing but a
/// device: the outcome and what the case expects (compared as `nse replay` compares), the exit status (65 for a
/// rejected payload, else 0), a rejection's single stderr line, and nothing on stderr otherwise. `nse replay` runs
/// the same cases in-process (ReplayTests); envelopes are sealed at test time, so no key is committed.
@Suite(.serialized) struct FixtureCaseTests {
    /// Cases `nse run` can run as they are: no SIP server, no extension of their own, a device that differs from a
    /// new one at most by content filtering.
    static let cases: [ReplayCase] = {
        let directory = TestSupport.fixtures + "/cases"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().filter { $0.hasSuffix(".json") }.compactMap { try? ReplayCase.load(directory + "/" + $0) }
            .filter {
                !$0.isSequence && $0.sip == nil && $0.extensionCommand == nil
                    && Set(($0.document["device"]?.objectValue ?? [:]).keys).isSubset(of: ["filtering"])
                    && !($0.pushes[0].seal?.serialized().contains("{{now") ?? false)
                    && $0.pushes[0].seal?["sign_with"] == nil
            }
    }()

    /// A device per filtering setting, and another device for wrong-key envelopes.
    static let devices: (plain: String, filtering: String, other: String) = {
        let root = (try? TestSupport.temporaryDirectory("nse-cases")) ?? "/tmp/nse-cases"
        _ = try? TestSupport.nse(["device", "init", root + "/bob"])
        _ = try? TestSupport.nse(["device", "init", root + "/bob-filtering", "--filtering"])
        _ = try? TestSupport.nse(["device", "init", root + "/eve"])
        return (root + "/bob", root + "/bob-filtering", root + "/eve")
    }()

    @Test func theFrontDoorRunsMostOfTheCorpus() throws {
        #expect(Self.cases.count >= 40)
        for name in ["duplicate-keys", "empty", "enc-wrong-key", "simctl-message", "call-escalated", "too-large"] {
            #expect(Self.cases.contains { $0.name == name }, "\(name)")
        }
    }

    /// A case writes numbers as it likes: 3600 matches a result's 3600.0 (a trigger's `seconds`), not 3601.
    @Test func anExpectedNumberMatchesTheSameNumberWrittenAsAReal() {
        let result: JSON = ["local_notifications": [["trigger": ["seconds": 3600.0]]], "extension": ["wall_ms": 12.5]]
        #expect(
            Expectations.compare(expected: ["local_notifications": ["0.trigger.seconds": 3600]], actual: result) == [])
        #expect(Expectations.compare(expected: ["extension": ["wall_ms": 12.5]], actual: result) == [])
        #expect(
            Expectations.compare(expected: ["local_notifications": ["0.trigger.seconds": 3601]], actual: result) == [
                "local_notifications.0.trigger.seconds: expected 3601, got 3600"
            ])
        #expect(Expectations.compare(expected: ["local_notifications": ["0.trigger": "x"]], actual: result).count == 1)
    }

    @Test(arguments: cases.map(\.name))
    func fixture(name: String) throws {
        let replayCase = try #require(Self.cases.first { $0.name == name })
        let push = replayCase.pushes[0]
        let filtering = replayCase.device.filtering
        let devicePath = filtering ? Self.devices.filtering : Self.devices.plain
        let bytes = try push.payload(
            sealingTo: try Device.open(at: devicePath), other: try Device.open(at: Self.devices.other))
        // A payload file keeps its name (a simctl .apns file stays one); the others are NAME.json.
        let fileName = push.payloadFilePath.map { ($0 as NSString).lastPathComponent } ?? name + ".json"
        let path = try TestSupport.temporaryDirectory() + "/" + fileName
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var arguments = ["run", "--device", devicePath, "--push-type", push.pushType, path]
        if let memoryLimit = replayCase.memoryLimit { arguments += ["--memory-limit", String(memoryLimit)] }
        if !replayCase.mustReport { arguments += ["--must-report", "false"] }
        let output = try TestSupport.nse(arguments)
        let result = try JSON.parse(output.stdout)
        let rejected = push.expect["outcome"] == "rejected"
        #expect(output.status == (rejected ? 65 : 0), "\(name): \(output.stderr)")
        #expect(Expectations.compare(expected: push.expect, actual: result) == [], "\(name)")
        if rejected {
            #expect(output.stderr.split(separator: "\n").count == 1, "\(name): one-line error: \(output.stderr)")
            #expect(
                output.stderr.hasPrefix("nse: payload rejected: \(result["apns_reason"]?.stringValue ?? "?")"),
                "\(name)")
            if let part = push.expect["reason_contains"]?.stringValue {
                #expect(output.stderr.contains(part), "\(name): \(output.stderr)")
            }
        } else {
            #expect(output.stderr.isEmpty, "\(name): \(output.stderr)")
        }
    }
}
