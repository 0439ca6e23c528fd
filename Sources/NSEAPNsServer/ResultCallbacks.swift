public import Logging
import NIOPosix
public import NSEHTTP
public import NSEJSON
import NSESystem
import Synchronization

/// POSTs recorded results to the callback URL a device names (`nse device set --callback-url`), off the delivery
/// threads. A failed POST (no connection, a 5xx, a timeout) is retried twice, after 0.5 s and 2 s; the result
/// itself is already on disk, so a callback that never succeeds is logged, not lost.
///
/// ``drain(seconds:)`` is woken by the last callback ending (or by its deadline), not by a timer polling a count.
public final class ResultCallbacks: Sendable {
    public static let retryDelays: [Double] = [0.5, 2]

    /// What a waiting ``drain(seconds:)`` is resumed to do next.
    private enum DrainTurn {
        /// The first drain: every callback ended, or its deadline passed; stop the threads, then wake the others.
        case stopThreads
        /// Another drain: the first one has stopped the threads.
        case done
    }

    /// Where the callbacks are in their life.
    private enum Phase {
        /// Taking callbacks.
        case open
        /// Admission closed by the first drain, which waits in `stopper` for the last callback to end (or its
        /// deadline); drains called since wait in `waiters`.
        case draining(stopper: CheckedContinuation<DrainTurn, Never>, waiters: [CheckedContinuation<DrainTurn, Never>])
        /// The first drain is stopping the threads; the others wait in `waiters`. A callback still running gives
        /// up instead of retrying; one still queued is not sent.
        case stopping(waiters: [CheckedContinuation<DrainTurn, Never>])
        /// The threads have stopped.
        case stopped
    }

    /// The phase and the callbacks queued or in flight, changed together under one lock; continuations are
    /// resumed outside it.
    private struct State {
        var phase = Phase.open
        var inFlight = 0
    }

    private let pool: NIOThreadPool
    private let state = Mutex(State())
    private let client: HTTPClient
    private let logger: Logger
    private let timeout: Double

    public init(
        threads: Int = 2, client: HTTPClient = HTTPClient(maxResponseBodyBytes: 64 * 1024), timeout: Double = 5,
        logger: Logger
    ) {
        pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
        self.client = client
        self.logger = logger
        self.timeout = timeout
    }

    /// Callbacks dropped without a drain (a PushService that is never drained, a test) still let their threads end.
    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// Callbacks queued or in flight.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Queues one POST of `result` to `url`, unless a drain has begun (then it is logged as not sent: the result
    /// itself is on disk).
    public func post(_ result: JSON, to url: String, apnsID: String) {
        let admitted = state.withLock { state -> Bool in
            guard case .open = state.phase else { return false }
            state.inFlight += 1
            return true
        }
        guard admitted else {
            logger.warning(
                "result callback not sent: the server is stopping",
                metadata: ["apns.id": .string(apnsID), "callback.url": .string(url)])
            return
        }
        let body = result.serializedBytes()
        pool.submit { [self] work in
            defer { finished() }
            guard work == .active else {
                logger.warning(
                    "result callback not sent: the server stopped before its turn",
                    metadata: ["apns.id": .string(apnsID), "callback.url": .string(url)])
                return
            }
            send(body, to: url, apnsID: apnsID)
        }
    }

    /// One callback's attempts, on a pool thread.
    private func send(_ body: [UInt8], to url: String, apnsID: String) {
        var request = HTTPRequest.post(url: url, json: body, headers: ["apns-id": apnsID])
        request.timeout = timeout
        request.connectTimeout = min(timeout, 5)
        var failure = ""
        for attempt in 0...Self.retryDelays.count {
            if attempt > 0 {
                guard !isStopping else {
                    logger.warning(
                        "result callback abandoned: the server is stopping",
                        metadata: [
                            "apns.id": .string(apnsID), "callback.url": .string(url),
                            "callback.error": .string(failure),
                        ])
                    return
                }
                Threads.sleep(seconds: Self.retryDelays[attempt - 1])
            }
            do {
                let response = try client.send(request)
                if response.status < 500 {
                    if response.status >= 300 {
                        logger.warning(
                            "result callback refused",
                            metadata: [
                                "apns.id": .string(apnsID), "callback.url": .string(url),
                                "callback.status": .stringConvertible(response.status),
                            ])
                    }
                    return
                }
                failure = "HTTP \(response.status)"
            } catch {
                failure = (error as? HTTPClientError)?.description ?? "\(error)"
            }
        }
        logger.warning(
            "result callback failed",
            metadata: ["apns.id": .string(apnsID), "callback.url": .string(url), "callback.error": .string(failure)])
    }

    /// Whether a drain gave up waiting (its deadline passed) and is stopping the threads.
    private var isStopping: Bool {
        state.withLock { state in
            switch state.phase {
            case .open, .draining: false
            case .stopping, .stopped: true
            }
        }
    }

    /// One callback ended; the last one ending while a drain waits wakes it.
    private func finished() {
        let stopper = state.withLock { state -> CheckedContinuation<DrainTurn, Never>? in
            state.inFlight -= 1
            guard state.inFlight == 0, case .draining(let stopper, let waiters) = state.phase else { return nil }
            state.phase = .stopping(waiters: waiters)
            return stopper
        }
        stopper?.resume(returning: .stopThreads)
    }

    /// The first drain's deadline: stop waiting for the callbacks still queued or running.
    private func deadlinePassed() {
        let stopper = state.withLock { state -> CheckedContinuation<DrainTurn, Never>? in
            guard case .draining(let stopper, let waiters) = state.phase else { return nil }
            state.phase = .stopping(waiters: waiters)
            return stopper
        }
        stopper?.resume(returning: .stopThreads)
    }

    /// Stops taking callbacks, waits (at most `seconds`) for those queued or in flight, then stops the threads: a
    /// callback still running then ends without retrying, one still queued is logged as not sent. Concurrent drains
    /// all return once the threads have stopped (the first drain's `seconds` bounds the wait); a drain after that
    /// returns at once.
    public func drain(seconds: Double = 30) async {
        /// What this drain found.
        enum Arrival {
            case resumeNow(DrainTurn)
            case wait
            /// The first drain with callbacks to wait for: its deadline starts.
            case waitUntilDeadline
        }
        var deadline: Task<Void, Never>?
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<DrainTurn, Never>) in
            let arrival = state.withLock { state -> Arrival in
                switch state.phase {
                case .open:
                    if state.inFlight == 0 {
                        state.phase = .stopping(waiters: [])
                        return .resumeNow(.stopThreads)
                    }
                    state.phase = .draining(stopper: continuation, waiters: [])
                    return .waitUntilDeadline
                case .draining(let stopper, let waiters):
                    state.phase = .draining(stopper: stopper, waiters: waiters + [continuation])
                    return .wait
                case .stopping(let waiters):
                    state.phase = .stopping(waiters: waiters + [continuation])
                    return .wait
                case .stopped:
                    return .resumeNow(.done)
                }
            }
            switch arrival {
            case .resumeNow(let turn):
                continuation.resume(returning: turn)
            case .wait:
                break
            case .waitUntilDeadline:
                // One timer for the whole wait, cancelled as soon as the last callback ends.
                deadline = Task { [self] in
                    guard (try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))) != nil else { return }
                    deadlinePassed()
                }
            }
        }
        deadline?.cancel()
        guard turn == .stopThreads else { return }
        try? await pool.shutdownGracefully()
        let waiters = state.withLock { state -> [CheckedContinuation<DrainTurn, Never>] in
            guard case .stopping(let waiters) = state.phase else {
                preconditionFailure("ResultCallbacks stopped twice")
            }
            state.phase = .stopped
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: .done) }
    }
}
