import NSECommandLine
import NSEHost
import NSEPayload
import Testing

@testable import nse

/// `nse run`'s own parser (the fast front door): valid arguments are taken, anything else is left to the full one.
@Suite struct RunArgumentsTests {
    @Test func takesEveryRunOption() throws {
        let parsed = try #require(
            RunArguments.parse([
                "--device", "/tmp/bob", "push.apns", "--push-type", "voip", "--budget=2.5", "--grace", "0",
                "--memory-limit", "12",
                "--extension", "./ext.py --loud", "--format", "text", "--extension-process", "warm",
                "--warm-idle=90",
            ]))
        var expected = RunOptions()
        expected.device = "/tmp/bob"
        expected.payloads = ["push.apns"]
        expected.pushType = .voip
        expected.budget = 2.5
        expected.grace = 0
        expected.memoryLimitMegabytes = 12
        expected.extensionCommand = "./ext.py --loud"
        expected.format = .text
        expected.extensionProcess = .warm
        expected.warmIdle = 90
        #expect(parsed == expected)
        #expect(RunArguments.parse([]) == RunOptions())
        #expect(RunArguments.parse(["-"])?.payloads == ["-"])
        // Several payloads: a sequence of pushes, in order.
        #expect(RunArguments.parse(["a.json", "-", "b.json"])?.payloads == ["a.json", "-", "b.json"])
    }

    @Test func leavesAnythingDoubtfulToTheFullCommandLine() {
        for arguments in [
            ["--help"], ["-h"], ["--verbose"], ["-", "-"], ["--budget", "0"], ["--budget", "-1"],
            ["--budget", "nan"],
            ["--budget", "4000"], ["--grace", "61"], ["--memory-limit", "0"], ["--push-type", "fax"],
            ["--format", "xml"],
            ["--device"], ["--device", ""], ["--extension", "  "], ["--extension-process", "hot"],
            ["--warm-idle", "0"], ["--warm-idle", "90000"],
        ] {
            #expect(RunArguments.parse(arguments) == nil, "\(arguments)")
        }
    }
}
