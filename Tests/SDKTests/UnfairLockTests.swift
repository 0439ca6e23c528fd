import Dispatch
import NSEOSLog
import Testing

@Suite struct UnfairLockTests {
    /// Threads contending for the lock lose no increment, through the kernel's hand-over when it is held.
    @Test func contendedIncrementsAreAllCounted() {
        let total = OSAllocatedUnfairLock(initialState: 0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<20_000 { total.withLock { $0 += 1 } }
        }
        #expect(total.withLock { $0 } == 160_000)
    }

    /// Held by another thread, `withLockIfAvailable` answers nil at once; free, it runs.
    @Test func aLockHeldElsewhereIsNotWaitedFor() {
        let lock = OSAllocatedUnfairLock(initialState: "free")
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detach {
            lock.withLockUnchecked { _ in
                held.signal()
                release.wait()
            }
            done.signal()
        }
        held.wait()
        #expect(lock.withLockIfAvailable { $0 } == nil)
        release.signal()
        done.wait()
        #expect(lock.withLockIfAvailable { $0 } == "free")
    }

    /// The C lock as Swift code calls it, and its word: the owner's thread id while held, 0 once free.
    @Test func theWordHoldsTheOwnerWhileLocked() {
        var word = os_unfair_lock()
        os_unfair_lock_lock(&word)
        #expect(word._os_unfair_lock_opaque != 0)
        #expect(!os_unfair_lock_trylock(&word))
        os_unfair_lock_unlock(&word)
        #expect(word._os_unfair_lock_opaque == 0)
        #expect(os_unfair_lock_trylock(&word))
        os_unfair_lock_unlock(&word)
    }
}

/// A thread of its own, so that the lock's owner is not the test's thread.
private enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async(execute: body)
    }
}
