#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A mutex with a condition, for threads that block until another one says so (a fork server's request waiting for
/// its reply, writes waiting for the batch that commits them). Never on an event loop or the cooperative pool.
public final class Monitor: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Runs `body` holding the mutex.
    public func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for a ``broadcast()``, letting go of the mutex meanwhile; only inside ``locked(_:)``.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every waiter; inside ``locked(_:)``.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

/// One thread waits until another wakes it, and no other thread wakes with it (a ``Monitor``'s broadcast wakes
/// them all): a semaphore, each `signal()` lets one `wait()` through, before or after it began.
public final class Wakeup: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    public init() { sem_init(semaphore, 0, 0) }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    public func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }

    /// ``wait()`` for at most `seconds` (0 to a day); false when it timed out. The deadline is on the wall clock
    /// (`sem_timedwait`; glibc's `sem_clockwait` is not visible to Swift): a clock set back meanwhile lengthens it.
    public func wait(seconds: Double) -> Bool {
        let bounded = seconds.isFinite ? min(max(seconds, 0), 86_400) : 86_400
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int(bounded * 1e9)
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    public func signal() { sem_post(semaphore) }
}
