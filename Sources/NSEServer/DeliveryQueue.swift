import NIOPosix
import Synchronization

/// A bounded queue in front of a fixed set of worker threads: at most `concurrency` deliveries run at once (each
/// blocks its thread while the extension process runs), at most `capacity` wait. Never runs work on an event loop.
public final class DeliveryQueue: Sendable {
    private struct State {
        var pending = 0
        var closed = false
    }

    public let concurrency: Int
    public let capacity: Int
    private let pool: NIOThreadPool
    private let state = Mutex(State())

    /// - Parameters:
    ///   - concurrency: worker threads.
    ///   - capacity: pushes that may wait for a worker.
    public init(concurrency: Int, capacity: Int) {
        self.concurrency = max(1, concurrency)
        self.capacity = max(0, capacity)
        self.pool = NIOThreadPool(numberOfThreads: self.concurrency)
        pool.start()
    }

    /// Pushes accepted and not yet done (running or waiting).
    public var pending: Int { state.withLock { $0.pending } }

    /// Whether a push was queued.
    public enum Admission: Sendable, Equatable {
        case accepted
        /// Every slot runs and the waiting room is full: 429 `TooManyRequests`.
        case full
        /// The server is stopping: 503 `Shutdown`.
        case closed
    }

    /// Queues `work` unless the queue is full or closed.
    public func submit(_ work: @escaping @Sendable () -> Void) -> Admission {
        let admission = reserve()
        if admission == .accepted { run(work) }
        return admission
    }

    /// Takes a slot unless the queue is full or closed; the slot is then given ``run(_:)`` or ``release()``.
    /// Lets a push be recorded between its admission and its start, and refused without a trace if it cannot be.
    public func reserve() -> Admission {
        state.withLock { state -> Admission in
            guard !state.closed else { return .closed }
            guard state.pending < concurrency + capacity else { return .full }
            state.pending += 1
            return .accepted
        }
    }

    /// Runs `work` in a slot taken by ``reserve()``.
    public func run(_ work: @escaping @Sendable () -> Void) {
        pool.submit { _ in
            // Run even when the pool is shutting down: an accepted push is never dropped.
            work()
            self.release()
        }
    }

    /// Gives back a slot taken by ``reserve()`` and not run.
    public func release() {
        state.withLock { $0.pending -= 1 }
    }

    /// Stops admitting, waits until every accepted push is done, then stops the threads.
    public func drain() async {
        state.withLock { $0.closed = true }
        while pending > 0 { try? await Task.sleep(nanoseconds: 10_000_000) }
        try? await pool.shutdownGracefully()
    }
}
