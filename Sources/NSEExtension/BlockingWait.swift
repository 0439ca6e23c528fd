import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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

/// A one-shot value handed from a task to a waiting thread (a pthread condition, no Foundation).
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private var value: T?
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func set(_ newValue: T) {
        pthread_mutex_lock(&mutex)
        value = newValue
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    func wait() -> T {
        pthread_mutex_lock(&mutex)
        while value == nil { pthread_cond_wait(&condition, &mutex) }
        let result = value!
        pthread_mutex_unlock(&mutex)
        return result
    }
}
