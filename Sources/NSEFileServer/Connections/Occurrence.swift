import Synchronization

/// Something that happens once (the server giving up on its last answers, a connection closing): tasks wait for it,
/// and a wait ends when it happens or when the waiting task is cancelled, so a task group racing it against a timer
/// never outlives the winner.
final class Occurrence: Sendable {
    private struct State {
        var happened = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextKey = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Marks it happened and wakes every waiter; later calls do nothing.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.happened else { return [] }
            state.happened = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var hasHappened: Bool { state.withLock { $0.happened } }

    /// Returns once it has happened, or as soon as the task is cancelled.
    func wait() async {
        let key = state.withLock { state in
            state.nextKey += 1
            return state.nextKey
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.happened || Task.isCancelled { return true }
                    state.waiters[key] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
    }

    /// Waits until `deadline` unless one of `interruptions` happens first (or the task is cancelled).
    /// - Returns: true when the time came, false when it was cut short.
    static func sleep(until deadline: ContinuousClock.Instant, unless interruptions: [Occurrence]) async -> Bool {
        if interruptions.contains(where: \.hasHappened) { return false }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await Task.sleep(until: deadline, clock: .continuous)) != nil }
            for interruption in interruptions {
                group.addTask {
                    await interruption.wait()
                    return false
                }
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
