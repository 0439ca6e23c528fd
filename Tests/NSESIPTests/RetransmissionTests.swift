import NSESIP
import Synchronization
import Testing

/// Timers E and F (RFC 3261 §17.1.2.2) as both ends run them, on short timers: T1 10 ms, T2 40 ms, Timer F 640 ms.
/// Sleeps never end early, so every gap is checked against its lower bound and the count against its upper bound.
@Suite struct RetransmissionTests {
    let timers = SIPTimers(t1: .milliseconds(10), t2: .milliseconds(40))

    /// Runs the timers, recording when each retransmission was asked for; `answer` says what each returns.
    func run(reliable: Bool, answer: @escaping @Sendable (Int) -> Bool? = { _ in false }) async -> (
        end: SIPRetransmissions.End, gaps: [Duration], elapsed: Duration
    ) {
        let clock = ContinuousClock()
        let start = clock.now
        let sent = Mutex<[ContinuousClock.Instant]>([])
        let end = await SIPRetransmissions.run(timers: timers, reliable: reliable) {
            let count = sent.withLock { times in
                times.append(clock.now)
                return times.count
            }
            return answer(count)
        }
        let times = [start] + sent.withLock { $0 }
        return (end, zip(times.dropFirst(), times).map { $0 - $1 }, clock.now - start)
    }

    @Test func overUDPTheRequestIsSentAgainDoublingUpToT2UntilTimerF() async {
        let (end, gaps, elapsed) = await run(reliable: false)
        #expect(end == .timedOut)
        #expect(elapsed >= timers.timerF)
        // 10, 20, then 40 ms gaps: at most 2 + 15 sends before 640 ms, and at least a few however slow the machine.
        #expect(gaps.count >= 4 && gaps.count <= 17, "\(gaps.count) retransmissions")
        var floor = timers.t1
        for gap in gaps {
            #expect(gap >= floor, "a retransmission came \(gap) after the previous one, before \(floor)")
            floor = min(floor * 2, timers.t2)
        }
    }

    @Test func overAReliableTransportNothingIsSentAgainAndTimerFStillFires() async {
        let (end, gaps, elapsed) = await run(reliable: true)
        #expect(end == .timedOut)
        #expect(gaps.isEmpty)
        #expect(elapsed >= timers.timerF)
    }

    @Test func aProvisionalResponseMovesTheIntervalToT2() async {
        let (end, gaps, _) = await run(reliable: false) { _ in true }
        #expect(end == .timedOut)
        #expect(gaps.count >= 2 && gaps.count <= 16)
        #expect(gaps.dropFirst().allSatisfy { $0 >= timers.t2 }, "\(gaps)")
    }

    @Test func aTransactionThatEndsStopsItsTimers() async {
        let (end, gaps, elapsed) = await run(reliable: false) { count in count < 3 ? false : nil }
        #expect(end == .ended)
        #expect(gaps.count == 3)
        #expect(elapsed < timers.timerF)
    }

    @Test func cancellingTheTaskEndsItAtOnce() async {
        let clock = ContinuousClock()
        let start = clock.now
        let task = Task {
            await SIPRetransmissions.run(timers: SIPTimers(t1: .seconds(1)), reliable: true) { false }
        }
        task.cancel()
        #expect(await task.value == .ended)
        #expect(clock.now - start < .seconds(64))
    }
}
