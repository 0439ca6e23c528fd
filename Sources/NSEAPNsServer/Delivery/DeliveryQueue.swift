import CoreMetrics
import NIOPosix
import Synchronization

/// A bounded queue in front of a fixed set of worker threads: at most `concurrency` deliveries run at once (each
/// blocks its thread while the extension process runs), at most `capacity` wait. Never runs work on an event loop.
///
/// ``drain()`` is woken by the last accepted push finishing, not by a timer: the queue moves through ``Phase``,
/// and the slot given back last resumes the drain that waits for it.
public final class DeliveryQueue: Sendable {
    /// What a waiting ``drain()`` is resumed to do next.
    private enum DrainTurn {
        /// The first drain: every accepted push is done; stop the threads, then wake the others.
        case stopThreads
        /// Another drain: the first one has stopped the threads.
        case done
    }

    /// Where the queue is in its life. Every transition happens under one lock; continuations are resumed outside it.
    private enum Phase {
        /// Admitting pushes; `pending` accepted and not yet done.
        case open(pending: Int)
        /// Admission closed by the first drain, which waits in `stopper` for the `pending` accepted pushes to be
        /// done; drains called since wait in `waiters`.
        case draining(
            pending: Int, stopper: CheckedContinuation<DrainTurn, Never>,
            waiters: [CheckedContinuation<DrainTurn, Never>])
        /// Every accepted push is done; the first drain is stopping the threads, the others wait in `waiters`.
        case stopping(waiters: [CheckedContinuation<DrainTurn, Never>])
        /// The threads have stopped.
        case stopped

        var pending: Int {
            switch self {
            case .open(let pending), .draining(let pending, _, _): pending
            case .stopping, .stopped: 0
            }
        }
    }

    public let concurrency: Int
    public let capacity: Int
    private let pool: NIOThreadPool
    private let phase = Mutex(Phase.open(pending: 0))
    /// `pending`, set under the lock whenever it changes, so the last value set is the current one.
    private let depth: Meter

    /// - Parameters:
    ///   - concurrency: worker threads.
    ///   - capacity: pushes that may wait for a worker.
    ///   - metrics: where the queue's depth is shown.
    public init(concurrency: Int, capacity: Int, metrics: ServeMetrics = ServeMetrics()) {
        self.concurrency = max(1, concurrency)
        self.capacity = max(0, capacity)
        self.depth = metrics.queueDepth
        self.pool = NIOThreadPool(numberOfThreads: self.concurrency)
        pool.start()
    }

    /// A queue dropped without a drain (an embedding that never stops it, a test) still lets its threads end.
    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// Whether pushes are admitted: `false` once a drain has begun.
    public var isAccepting: Bool {
        phase.withLock { phase in
            if case .open = phase { return true }
            return false
        }
    }

    /// Pushes accepted and not yet done (running or waiting).
    public var pending: Int { phase.withLock { $0.pending } }

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
        admit(pastCapacity: false)
    }

    /// Takes a slot for a push that was accepted before (a previous run of the server answered it 200): it is not
    /// refused for want of room, as it was admitted already, so it may go past `capacity`; only a closed queue
    /// refuses it (`false`). The slot is then given ``run(_:)`` or ``release()``.
    public func readmit() -> Bool {
        admit(pastCapacity: true) == .accepted
    }

    private func admit(pastCapacity: Bool) -> Admission {
        phase.withLock { phase -> Admission in
            guard case .open(let pending) = phase else { return .closed }
            guard pastCapacity || pending < concurrency + capacity else { return .full }
            phase = .open(pending: pending + 1)
            depth.set(pending + 1)
            return .accepted
        }
    }

    /// Runs `work` in a slot taken by ``reserve()``.
    public func run(_ work: @escaping @Sendable () -> Void) {
        pool.submit { _ in
            // Run even when the pool is shutting down: an accepted push is never dropped. (It cannot be: the
            // threads stop only once every accepted push is done.)
            work()
            self.release()
        }
    }

    /// Gives back a slot taken by ``reserve()`` and not run. The last slot given back while draining wakes the drain.
    public func release() {
        let stopper = phase.withLock { phase -> CheckedContinuation<DrainTurn, Never>? in
            switch phase {
            case .open(let pending):
                precondition(pending > 0, "DeliveryQueue.release without a reserved slot")
                phase = .open(pending: pending - 1)
                depth.set(pending - 1)
                return nil
            case .draining(let pending, let stopper, let waiters):
                depth.set(pending - 1)
                guard pending == 1 else {
                    phase = .draining(pending: pending - 1, stopper: stopper, waiters: waiters)
                    return nil
                }
                phase = .stopping(waiters: waiters)
                return stopper
            case .stopping, .stopped:
                preconditionFailure("DeliveryQueue.release after every accepted push was done")
            }
        }
        stopper?.resume(returning: .stopThreads)
    }

    /// Stops admitting, waits until every accepted push is done, then stops the threads. Concurrent drains all
    /// return once the threads have stopped; a drain after that returns at once.
    public func drain() async {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<DrainTurn, Never>) in
            let now = phase.withLock { phase -> DrainTurn? in
                switch phase {
                case .open(let pending):
                    if pending == 0 {
                        phase = .stopping(waiters: [])
                        return .stopThreads
                    }
                    phase = .draining(pending: pending, stopper: continuation, waiters: [])
                    return nil
                case .draining(let pending, let stopper, let waiters):
                    phase = .draining(pending: pending, stopper: stopper, waiters: waiters + [continuation])
                    return nil
                case .stopping(let waiters):
                    phase = .stopping(waiters: waiters + [continuation])
                    return nil
                case .stopped:
                    return .done
                }
            }
            if let now { continuation.resume(returning: now) }
        }
        guard turn == .stopThreads else { return }
        try? await pool.shutdownGracefully()
        let waiters = phase.withLock { phase -> [CheckedContinuation<DrainTurn, Never>] in
            guard case .stopping(let waiters) = phase else { preconditionFailure("DeliveryQueue stopped twice") }
            phase = .stopped
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: .done) }
    }
}
