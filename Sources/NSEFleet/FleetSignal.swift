import Synchronization

/// What the fleet's loops nap on between their turns. ``stop()``, once: every ``nap(upTo:)`` under way or to come
/// returns at once, so the loops (the heartbeat, the look for stopped nodes, the broadcasts' hand-out) end at their
/// next turn without being cancelled: a takeover or a transaction under way is finished, not cut short (docs/serve.md,
/// "A fleet on PostgreSQL"). ``wake()``, any number of times: the nap under way returns, or the next one if none is
/// (a broadcast taken while the hand-out was busy is looked for at once). Any one-shot event waited for with a bound
/// is one too (the end of the tasks a stop waits for).
final class FleetSignal: Sendable {
    private struct State {
        var stopped = false
        /// A wake that came while nobody napped, kept for the next nap.
        var woken = false
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
        for nap in naps { Self.end(nap) }
    }

    /// Ends the naps under way; with none, the next nap returns at once.
    func wake() {
        let naps = state.withLock { state in
            defer { state.naps = [:] }
            state.woken = state.naps.isEmpty
            return Array(state.naps.values)
        }
        for nap in naps { Self.end(nap) }
    }

    /// Returns once stopped (or the task is cancelled).
    func wait() async {
        while !isStopped, !Task.isCancelled { await nap(upTo: .seconds(3600)) }
    }

    /// Returns after `duration`, or at once when stopped or woken, or the task is cancelled.
    func nap(upTo duration: Duration) async {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard !state.stopped, !state.woken, !Task.isCancelled else {
                        state.woken = false
                        return true
                    }
                    state.naps[id] = (waiter, nil)
                    return false
                }
                if now { return waiter.resume() }
                let timer = Task { [self] in
                    guard (try? await Task.sleep(for: duration)) != nil else { return }
                    end(id)
                }
                // The nap may have ended meanwhile (a stop, a wake): its timer then has nothing left to end.
                let ended = state.withLock { state -> Bool in
                    guard state.naps[id] != nil else { return true }
                    state.naps[id]?.timer = timer
                    return false
                }
                if ended { timer.cancel() }
            }
        } onCancel: {
            end(id)
        }
    }

    private func end(_ id: Int) {
        guard let nap = state.withLock({ $0.naps.removeValue(forKey: id) }) else { return }
        Self.end(nap)
    }

    private static func end(_ nap: (waiter: CheckedContinuation<Void, Never>, timer: Task<Void, Never>?)) {
        nap.timer?.cancel()
        nap.waiter.resume()
    }
}
