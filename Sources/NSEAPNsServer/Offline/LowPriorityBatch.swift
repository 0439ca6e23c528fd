import Dispatch
import Synchronization

/// Low-priority pushes (`apns-priority` 5 or 1) held back and delivered together, as APNs may deliver them "late and
/// in bursts" to spare the device's power (`nse serve --low-priority-interval S`): the first one to wait starts a
/// timer of S seconds; when it fires, every push waiting goes at once, oldest first. Event-driven: nothing runs while
/// nothing waits.
final class LowPriorityBatch: Sendable {
    private struct State {
        var waiting: [RecordedPush] = []
        var scheduled = false
        var closed = false
        var deliver: (@Sendable ([RecordedPush]) -> Void)?
    }

    let interval: Double
    private let state = Mutex(State())

    init(interval: Double) {
        self.interval = interval
    }

    /// Who runs a burst (set once, by the service that owns the batch).
    var deliver: (@Sendable ([RecordedPush]) -> Void)? {
        get { state.withLock { $0.deliver } }
        set { state.withLock { $0.deliver = newValue } }
    }

    /// Puts a push in the next burst; false once closed (the caller runs it at once).
    func add(_ push: RecordedPush) -> Bool {
        let schedule = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.waiting.append(push)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard let schedule else { return false }
        if schedule {
            DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [weak self] in self?.flush() }
        }
        return true
    }

    /// Delivers what waits now.
    func flush() {
        let (burst, deliver) = state.withLock { state in
            defer {
                state.waiting = []
                state.scheduled = false
            }
            return (state.waiting, state.deliver)
        }
        if !burst.isEmpty { deliver?(burst) }
    }

    /// The server is stopping: what waits goes now, and later pushes are not held.
    func close() {
        state.withLock { $0.closed = true }
        flush()
    }
}
