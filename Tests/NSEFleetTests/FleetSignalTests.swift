import Testing

@testable import NSEFleet

/// What the fleet's loops nap on: a stop ends every nap for good, a wake the one under way or else the next.
struct FleetSignalTests {
    /// A nap this long ends only by a stop or a wake: a test that waits for it would fail by its own time limit.
    private static let long = Duration.seconds(60)

    @Test("a wake while nobody naps ends the next nap at once, and only that one")
    func wakeIsKeptForTheNextNap() async {
        let signal = FleetSignal()
        signal.wake()
        let clock = ContinuousClock()
        let first = await clock.measure { await signal.nap(upTo: Self.long) }
        #expect(first < .seconds(5))
        let second = await clock.measure { await signal.nap(upTo: .milliseconds(200)) }
        #expect(second >= .milliseconds(200))
        #expect(!signal.isStopped)
    }

    @Test("a wake ends the nap under way, which is not kept for a later one")
    func wakeEndsTheNapUnderWay() async throws {
        let signal = FleetSignal()
        let napping = Task { await signal.nap(upTo: Self.long) }
        try await Task.sleep(for: .milliseconds(100))
        signal.wake()
        let clock = ContinuousClock()
        let waited = await clock.measure { await napping.value }
        #expect(waited < .seconds(5))
        let later = await clock.measure { await signal.nap(upTo: .milliseconds(200)) }
        #expect(later >= .milliseconds(200))
    }

    @Test("a stop ends the naps under way and every nap after it")
    func stopEndsEveryNap() async throws {
        let signal = FleetSignal()
        let naps = (0..<3).map { _ in Task { await signal.nap(upTo: Self.long) } }
        try await Task.sleep(for: .milliseconds(100))
        signal.stop()
        let clock = ContinuousClock()
        let waited = await clock.measure {
            for nap in naps { await nap.value }
            await signal.nap(upTo: Self.long)
            await signal.wait()
        }
        #expect(waited < .seconds(5))
        #expect(signal.isStopped)
    }

    @Test("a cancelled task's nap returns at once")
    func cancelledNapReturns() async throws {
        let signal = FleetSignal()
        let napping = Task { await signal.nap(upTo: Self.long) }
        try await Task.sleep(for: .milliseconds(100))
        napping.cancel()
        let waited = await ContinuousClock().measure { await napping.value }
        #expect(waited < .seconds(5))
    }
}
