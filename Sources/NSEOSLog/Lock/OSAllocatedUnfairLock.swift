/// Apple's Swift lock over `os_unfair_lock` (iOS 16): the lock and its state in one heap allocation, so the lock's
/// address is stable, which a `var os_unfair_lock` stored in a Swift class is not promised to be.
public struct OSAllocatedUnfairLock<State>: @unchecked Sendable {
    /// What ``precondition(_:)`` asserts of the calling thread.
    public enum Ownership: Hashable, Sendable {
        case owner, notOwner
    }

    private let storage: ManagedBuffer<State, os_unfair_lock>

    /// A lock guarding `initialState`, which need not be `Sendable`: the caller vouches for it.
    public init(uncheckedState initialState: State) {
        // The header (the state) is the buffer's stored property, destroyed with it; the lock is a plain word.
        storage = ManagedBuffer.create(minimumCapacity: 1) { _ in initialState }
        storage.withUnsafeMutablePointerToElements { $0.initialize(to: os_unfair_lock()) }
    }

    public init(initialState: State) where State: Sendable {
        self.init(uncheckedState: initialState)
    }

    public func withLockUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointers { state, lock in
            os_unfair_lock_lock(lock)
            defer { os_unfair_lock_unlock(lock) }
            return try body(&state.pointee)
        }
    }

    public func withLock<R: Sendable>(_ body: @Sendable (inout State) throws -> R) rethrows -> R {
        try withLockUnchecked(body)
    }

    /// nil, at once, when another thread holds the lock.
    public func withLockIfAvailableUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R? {
        try storage.withUnsafeMutablePointers { state, lock in
            guard os_unfair_lock_trylock(lock) else { return nil }
            defer { os_unfair_lock_unlock(lock) }
            return try body(&state.pointee)
        }
    }

    public func withLockIfAvailable<R: Sendable>(_ body: @Sendable (inout State) throws -> R) rethrows -> R? {
        try withLockIfAvailableUnchecked(body)
    }

    /// Stops the process, as Apple's does, unless the calling thread's ownership is `condition`.
    public func precondition(_ condition: Ownership) {
        storage.withUnsafeMutablePointerToElements { lock in
            switch condition {
            case .owner: os_unfair_lock_assert_owner(lock)
            case .notOwner: os_unfair_lock_assert_not_owner(lock)
            }
        }
    }
}

extension OSAllocatedUnfairLock where State == () {
    public init() {
        self.init(uncheckedState: ())
    }

    public func lock() {
        storage.withUnsafeMutablePointerToElements { os_unfair_lock_lock($0) }
    }

    public func unlock() {
        storage.withUnsafeMutablePointerToElements { os_unfair_lock_unlock($0) }
    }

    public func lockIfAvailable() -> Bool {
        storage.withUnsafeMutablePointerToElements { os_unfair_lock_trylock($0) }
    }

    public func withLockUnchecked<R>(_ body: () throws -> R) rethrows -> R {
        try withLockUnchecked { (_: inout State) in try body() }
    }

    public func withLock<R: Sendable>(_ body: @Sendable () throws -> R) rethrows -> R {
        try withLockUnchecked { (_: inout State) in try body() }
    }
}
