import Foundation
import Synchronization

/// Blocks pool threads until the test opens it: work that "runs" for as long as the test wants.
final class ThreadGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Mutex(0)

    /// Called by the work: counts itself in, then blocks until ``open(_:)``.
    func pass() {
        entered.withLock { $0 += 1 }
        semaphore.wait()
    }

    /// Works that have reached the gate.
    var arrivals: Int { entered.withLock { $0 } }

    /// Lets `count` works through.
    func open(_ count: Int = 1) {
        for _ in 0..<count { semaphore.signal() }
    }

    /// Waits (bounded, 10 s) until `count` works wait at the gate.
    func waitForArrivals(_ count: Int) async throws {
        for _ in 0..<1000 where arrivals < count { try await Task.sleep(nanoseconds: 10_000_000) }
    }
}

/// The moment an async call ended, if it has: lets a test check that a drain is still waiting, then how soon it
/// returned once its work ended.
final class Ending: Sendable {
    private let at = Mutex<ContinuousClock.Instant?>(nil)

    func mark() { at.withLock { $0 = .now } }
    var hasEnded: Bool { at.withLock { $0 != nil } }
    var instant: ContinuousClock.Instant? { at.withLock { $0 } }

    /// Waits (bounded) for the call to end: a drain that never wakes fails its test instead of hanging the run.
    func waitForEnd(seconds: Double = 10) async throws -> Bool {
        for _ in 0..<Int(seconds * 100) where !hasEnded { try await Task.sleep(nanoseconds: 10_000_000) }
        return hasEnded
    }

    /// Runs `call` in a task of its own and returns the marker of its end.
    static func of(_ call: @escaping @Sendable () async -> Void) -> Ending {
        let ending = Ending()
        Task {
            await call()
            ending.mark()
        }
        return ending
    }
}
