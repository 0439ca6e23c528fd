import Synchronization

/// A node's stop, as the fleet's loops see it: ``stop()`` once, and every ``nap(upTo:)`` under way or to come returns
/// at once. The loops (the heartbeat, the look for stopped nodes, the broadcasts' hand-out) end at their next turn
/// without being cancelled: a takeover or a transaction under way is finished, not cut short (docs/serve.md, "A
/// fleet on PostgreSQL"). Any one-shot event waited for with a bound is one too (the end of the tasks a stop waits
/// for).
final class FleetStop: Sendable {
    private struct State {
        var stopped = false
        var next = 0
        /// Naps under way, each with its timer.
        var naps: [Int: (waiter: CheckedContinuation<Void, Never>, timer: Task<Void, Never>?)] = [:]
    }

    private let state = Mutex(State())

    var isStopped: Bool { state.withLock { $0.stopped } }

    func stop() {
        let naps = state.withLock { state in
            state.stopped = true
            defer { state.naps = [:] }
            return Array(state.naps.values)
        }
        for nap in naps {
            nap.timer?.cancel()
            nap.waiter.resume()
        }
    }

    /// Returns once the node stops (or the task is cancelled).
    func wait() async {
        while !isStopped, !Task.isCancelled { await nap(upTo: .seconds(3600)) }
    }

    /// Returns after `duration`, or at once when the node stops or the task is cancelled.
    func nap(upTo duration: Duration) async {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard !state.stopped, !Task.isCancelled else { return true }
                    state.naps[id] = (waiter, nil)
                    return false
                }
                if now { return waiter.resume() }
                let timer = Task { [self] in
                    guard (try? await Task.sleep(for: duration)) != nil else { return }
                    wake(id)
                }
                // The nap may have ended meanwhile (a stop): its timer then has nothing left to wake.
                let ended = state.withLock { state -> Bool in
                    guard state.naps[id] != nil else { return true }
                    state.naps[id]?.timer = timer
                    return false
                }
                if ended { timer.cancel() }
            }
        } onCancel: {
            wake(id)
        }
    }

    private func wake(_ id: Int) {
        guard let nap = state.withLock({ $0.naps.removeValue(forKey: id) }) else { return }
        nap.timer?.cancel()
        nap.waiter.resume()
    }
}
