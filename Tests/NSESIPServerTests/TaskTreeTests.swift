import Synchronization
import Testing

@testable import NSESIPServer

@Suite("The server's task tree, stop signals and event log", .timeLimit(.minutes(1)))
struct TaskTreeTests {
    @Test func aStopSignalEndsItsRunAtOnce() async throws {
        let signal = StopSignal()
        let clock = ContinuousClock()
        let start = clock.now
        let running = Task {
            await signal.run { () async -> Int? in
                do { try await Task.sleep(for: .seconds(30)) } catch { return nil }
                return 1
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        signal.stop()
        let value = try await withTimeout(5, "the stopped run") { await running.value }
        #expect(value == nil)
        // Well before the body's 30 s sleep could end. (Not a tighter bound: when the whole suite runs in parallel on
        // 2 cores, tests that wait for processes can hold the cooperative pool for seconds.)
        #expect(clock.now - start < .seconds(25))
    }

    @Test func aRunReturnsItsBodysValueAndAStoppedSignalRunsNothingLong() async throws {
        #expect(await StopSignal().run { () async -> Int? in 7 } == 7)
        let stopped = StopSignal()
        stopped.stop()
        let value = try await withTimeout(5, "a run on a stopped signal") {
            await stopped.run { () async -> Int? in
                do { try await Task.sleep(for: .seconds(30)) } catch { return nil }
                return 1
            }
        }
        #expect(value == nil)
    }

    @Test func theTreeRunsSpawnedJobsAndFinishingCancelsTheRest() async throws {
        let tree = TaskTree()
        let ran = Atomic<Int>(0)
        let running = Task {
            await tree.run([
                {
                    // A long-lived child: ends only by cancellation.
                    while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
                    ran.add(100, ordering: .relaxed)
                }
            ])
        }
        for _ in 0..<3 { tree.spawn { ran.add(1, ordering: .relaxed) } }
        try await eventually("the spawned jobs ran", seconds: 5) { ran.load(ordering: .relaxed) == 3 }
        tree.finish()
        try await withTimeout(5, "the tree to end") { await running.value }
        #expect(ran.load(ordering: .relaxed) == 103)
        tree.spawn { ran.add(1000, ordering: .relaxed) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(ran.load(ordering: .relaxed) == 103)
    }

    @Test func theEventLogKeepsTheNewestInOrder() {
        var log = EventLog()
        for i in 0..<13_000 { log.append(.answered(method: "MESSAGE", callID: "\(i)", status: 200)) }
        let all = log.all
        #expect(all.count == EventLog.capacity)
        #expect(all.first == .answered(method: "MESSAGE", callID: "3000", status: 200))
        #expect(all.last == .answered(method: "MESSAGE", callID: "12999", status: 200))
        log.finish()
    }
}
