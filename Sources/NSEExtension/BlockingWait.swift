import NSESystem

/// Runs async work from synchronous code, blocking the calling thread until it is done.
enum BlockingWait {
    static func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        Task.detached { box.set(await operation()) }
        return box.wait()
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

/// A one-shot value handed from a task to a waiting thread (NSESystem's `Monitor`, no Foundation).
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private var value: T?
    private let monitor = Monitor()

    func set(_ newValue: T) {
        monitor.locked {
            value = newValue
            monitor.broadcast()
        }
    }

    func wait() -> T {
        monitor.locked {
            while value == nil { monitor.wait() }
            return value!
        }
    }
}
