import NSEAPNsServer
import Synchronization
import Testing

/// `DeliveryQueue`: admission, and a drain woken by the last accepted push rather than by a timer. Every drain runs
/// in a task of its own and is awaited with a bound, so one that never wakes fails instead of hanging the run.
@Suite struct DeliveryQueueTests {
    @Test func drainWithNothingPendingReturnsAtOnceAndClosesAdmission() async throws {
        let queue = DeliveryQueue(concurrency: 2, capacity: 2)
        let started = ContinuousClock.now
        let drained = Ending.of { await queue.drain() }
        #expect(try await drained.waitForEnd())
        #expect(try #require(drained.instant) - started < .seconds(5))
        #expect(queue.reserve() == .closed)
        #expect(queue.submit {} == .closed)
        #expect(queue.pending == 0)
    }

    @Test func aPushAdmittedBeforeIsReadmittedPastCapacityButNotOnceClosed() async throws {
        let queue = DeliveryQueue(concurrency: 1, capacity: 1)
        #expect(queue.reserve() == .accepted)
        #expect(queue.reserve() == .accepted)
        #expect(queue.reserve() == .full)
        #expect(queue.readmit())
        #expect(queue.pending == 3)
        for _ in 0..<3 { queue.release() }
        let drained = Ending.of { await queue.drain() }
        #expect(try await drained.waitForEnd())
        #expect(!queue.readmit())
        #expect(queue.pending == 0)
    }

    @Test func drainWaitsWhileWorkRunsAndReturnsWhenTheLastPushEnds() async throws {
        let queue = DeliveryQueue(concurrency: 2, capacity: 4)
        let gate = ThreadGate()
        let done = Mutex(0)
        for _ in 0..<3 {
            #expect(
                queue.submit {
                    gate.pass()
                    done.withLock { $0 += 1 }
                } == .accepted)
        }
        try await gate.waitForArrivals(2)  // two run, one waits for a thread
        let drained = Ending.of { await queue.drain() }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(!drained.hasEnded)
        #expect(queue.pending == 3)
        gate.open(2)
        try await gate.waitForArrivals(3)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(!drained.hasEnded, "a drain returned while an accepted push still ran")
        #expect(queue.pending == 1)
        let opened = ContinuousClock.now
        gate.open()
        #expect(try await drained.waitForEnd())
        #expect(done.withLock { $0 } == 3)
        #expect(queue.pending == 0)
        let woke = try #require(drained.instant) - opened
        #expect(woke < .seconds(5), "the drain returned \(woke) after the last push ended")
    }

    @Test func admissionClosesWhenADrainBeginsAndAReservedSlotGivenBackWakesIt() async throws {
        let queue = DeliveryQueue(concurrency: 1, capacity: 1)
        #expect(queue.reserve() == .accepted)
        let drained = Ending.of { await queue.drain() }
        // Probe until the drain has closed admission (giving back any slot a probe took before that).
        var probe = DeliveryQueue.Admission.accepted
        for _ in 0..<500 {
            probe = queue.reserve()
            if probe == .closed { break }
            if probe == .accepted { queue.release() }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        #expect(probe == .closed)
        let ran = Mutex(false)
        #expect(queue.submit { ran.withLock { $0 = true } } == .closed)
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(!drained.hasEnded)
        #expect(queue.pending == 1)
        queue.release()
        #expect(try await drained.waitForEnd())
        #expect(!ran.withLock { $0 }, "work refused at admission ran anyway")
        #expect(queue.pending == 0)
    }

    @Test func fullWhenEveryWorkerRunsAndTheWaitingRoomIsFull() async throws {
        let queue = DeliveryQueue(concurrency: 1, capacity: 1)
        let gate = ThreadGate()
        #expect(queue.submit { gate.pass() } == .accepted)
        #expect(queue.submit { gate.pass() } == .accepted)
        #expect(queue.submit { gate.pass() } == .full)
        #expect(queue.pending == 2)
        gate.open(2)
        let drained = Ending.of { await queue.drain() }
        #expect(try await drained.waitForEnd())
        #expect(queue.pending == 0)
        #expect(gate.arrivals == 2)
    }

    @Test func concurrentDrainsAllReturnOnceTheWorkIsDone() async throws {
        let queue = DeliveryQueue(concurrency: 2, capacity: 2)
        let gate = ThreadGate()
        let done = Mutex(0)
        for _ in 0..<2 {
            _ = queue.submit {
                gate.pass()
                done.withLock { $0 += 1 }
            }
        }
        try await gate.waitForArrivals(2)
        let drains = (0..<4).map { _ in Ending.of { await queue.drain() } }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(drains.allSatisfy { !$0.hasEnded })
        gate.open(2)
        for drained in drains { #expect(try await drained.waitForEnd()) }
        #expect(done.withLock { $0 } == 2)
        // And a drain after the threads stopped returns at once.
        let late = Ending.of { await queue.drain() }
        #expect(try await late.waitForEnd(seconds: 1))
    }
}
