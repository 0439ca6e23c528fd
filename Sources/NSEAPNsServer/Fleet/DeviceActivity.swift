import Synchronization

/// Which devices have a push being admitted or run now, so that a fleet's node can give devices back
/// (docs/serve.md, "Coming back"): once a device is leaving, nothing new starts for it here (an admission is
/// refused, a queued push is left unrun in its `results.db` for the node taking the device back), and the
/// handback waits for what had started.
final class DeviceActivity: Sendable {
    private struct State {
        /// Admissions and runs in progress, by device folder.
        var active: [String: Int] = [:]
        var leaving: Set<String> = []
        /// Handbacks waiting for their devices to be idle.
        var waiters: [(devices: Set<String>, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// Starts an admission or a run for the device in `directory`; false when it is leaving (nothing may start).
    /// Each `true` is matched by one ``exit(_:)``.
    func enter(_ directory: String) -> Bool {
        state.withLock { state in
            guard !state.leaving.contains(directory) else { return false }
            state.active[directory, default: 0] += 1
            return true
        }
    }

    func exit(_ directory: String) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let left = (state.active[directory] ?? 1) - 1
            state.active[directory] = left > 0 ? left : nil
            guard left <= 0 else { return [] }
            return Self.idleWaiters(&state)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Nothing new starts for these devices from now on.
    func leave(_ directories: some Sequence<String>) {
        state.withLock { $0.leaving.formUnion(directories) }
    }

    /// The devices stay after all (the handback failed before they went): pushes start for them again.
    func stay(_ directories: some Sequence<String>) {
        state.withLock { $0.leaving.subtract(directories) }
    }

    /// Returns once no admission or run of these devices is in progress.
    func idle(_ directories: Set<String>) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard directories.contains(where: { state.active[$0] != nil }) else { return true }
                state.waiters.append((directories, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Takes out the waiters whose devices are all idle now.
    private static func idleWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var woken: [CheckedContinuation<Void, Never>] = []
        state.waiters.removeAll { waiter in
            guard !waiter.devices.contains(where: { state.active[$0] != nil }) else { return false }
            woken.append(waiter.continuation)
            return true
        }
        return woken
    }
}
