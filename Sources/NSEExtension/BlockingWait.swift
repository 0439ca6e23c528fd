import NSESystem

/// Runs async work from synchronous code, blocking the calling thread until it is done.
enum BlockingWait {
    static func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        Task.detached { box.set(await operation()) }
        return box.wait()
    }

    /// ``run(_:)`` reading `host` meanwhile (``HostLink/run(_:)``), or just waiting without one (the main app's
    /// fetch has no host).
    static func run<T: Sendable>(reading host: HostLink?, _ operation: @escaping @Sendable () async -> T) -> T {
        guard let host else { return run(operation) }
        return host.run(operation)
    }
}

/// Work started on a thread of its own, its value waited for later by another thread.
final class Background<T: Sendable>: Sendable {
    private let box = ResultBox<T>()

    /// Starts `work` on a new thread (`onThread`), or does it at once on this one (also when no thread can be made).
    init(onThread: Bool = true, _ work: @escaping @Sendable () -> T) {
        let box = box
        if !onThread || !Threads.detach({ box.set(work()) }) { box.set(work()) }
    }

    /// Blocks until the work is done; its value.
    func value() -> T { box.wait() }
}

/// A one-shot value handed from a task or thread to a waiting thread: one blocked in ``wait()`` (NSESystem's
/// `Monitor`, no Foundation), or one in `poll` on `wake` (``HostLink``), which looks at ``current``.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    private var value: T?
    private let monitor = Monitor()
    /// Held, so that the pipe outlives a `set` that comes after the waiting thread has moved on.
    private let wake: WakePipe?

    init(wake: WakePipe? = nil) {
        self.wake = wake
    }

    func set(_ newValue: T) {
        monitor.locked {
            value = newValue
            monitor.broadcast()
        }
        wake?.signal()
    }

    /// The value if it is set, without waiting.
    var current: T? { monitor.locked { value } }

    func wait() -> T {
        monitor.locked {
            while value == nil { monitor.wait() }
            return value!
        }
    }
}
