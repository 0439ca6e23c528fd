import NSEJSON
import NSESystem
import Testing

@testable import NSEFileServer

/// Fault rules from `--fault` and JSON, and which of them a download takes.
@Suite struct FileFaultTests {
    static let id = String(repeating: "ab", count: 16)

    @Test(arguments: [
        ("slow:20000", FileFault(.slow(bytesPerSecond: 20000))),
        ("truncate:1000", FileFault(.truncate(afterBytes: 1000))),
        ("truncate:0,count=2", FileFault(.truncate(afterBytes: 0), count: 2)),
        ("delay:2.5", FileFault(.delay(seconds: 2.5))),
        ("not-found,file=\(id)", FileFault(.notFound, file: id)),
        ("wrong-hash,count=1,file=\(id)", FileFault(.wrongHash, file: id, count: 1)),
    ])
    func spec(_ text: String, expected: FileFault) throws {
        let fault = try FileFault(spec: text)
        #expect(fault == expected)
        #expect(try FileFault(json: fault.json) == fault)
    }

    @Test(arguments: [
        "slow", "slow:0", "slow:fast", "truncate:-1", "delay:301", "not-found:3", "melt", "wrong-hash,file=../x",
        "slow:10,count=0", "slow:10,speed=2", "",
    ])
    func refusedSpec(_ text: String) {
        #expect(throws: FileFault.Invalid.self) { try FileFault(spec: text) }
    }

    @Test func aDownloadTakesOneRuleOfEachKindAndCountsThemDown() {
        let other = String(repeating: "cd", count: 16)
        let plan = FileFaultPlan([
            FileFault(.slow(bytesPerSecond: 100), count: 1), FileFault(.slow(bytesPerSecond: 200)),
            FileFault(.delay(seconds: 1), file: other), FileFault(.truncate(afterBytes: 5), file: Self.id, count: 2),
        ])
        let first = plan.take(file: Self.id, head: false)
        #expect(first.bytesPerSecond == 100 && first.truncateAfter == 5 && first.delay == nil)
        #expect(first.names == ["slow", "truncate"])
        let second = plan.take(file: Self.id, head: false)
        #expect(second.bytesPerSecond == 200 && second.truncateAfter == 5)
        let third = plan.take(file: Self.id, head: false)
        #expect(third.bytesPerSecond == 200 && third.truncateAfter == nil)
        // A HEAD takes no rule that changes a body.
        #expect(plan.take(file: other, head: true) == FileFaultPlan.Applied(delay: 1, names: ["delay"]))
        #expect(plan.entries.map(\.rule.effect.name) == ["slow", "delay"])
    }

    @Test func wrongHashInvertsTheFileEndsWhereverTheyFall() {
        var middle: [UInt8] = [1, 2, 3]
        DownloadBody.invertEnds(&middle, at: 10, fileSize: 100)
        #expect(middle == [1, 2, 3])
        var whole: [UInt8] = [1, 2, 3]
        DownloadBody.invertEnds(&whole, at: 0, fileSize: 3)
        #expect(whole == [~1, 2, ~3])
        var single: [UInt8] = [7]
        DownloadBody.invertEnds(&single, at: 0, fileSize: 1)
        #expect(single == [~7])
    }
}
