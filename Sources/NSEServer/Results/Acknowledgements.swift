import NSEDevice
import Synchronization

/// Which accepted pushes still wait to know whether their 200 reached the client.
///
/// A push is recorded before it is answered; if the answer cannot be written (the stream was reset, the
/// connection closed or failed), its row is marked not acknowledged, so a provider's retry can be told apart from
/// a second push. Keyed by the answer's `apns-unique-id`, which is new for every push.
public final class Acknowledgements: Sendable {
    enum Stage: Sendable {
        /// Recorded; the answer is not written yet.
        case expected
        /// ``AnswerObserver`` is writing the answer and will settle it.
        case writing
    }

    struct Pending: Sendable {
        var stage: Stage
        let row: ResultStore.Row
        let device: Device
    }

    private let pending = Mutex<[String: Pending]>([:])
    private let onUnacknowledged: @Sendable (ResultStore.Row, Device) -> Void

    /// - Parameter onUnacknowledged: marks a row (called at most once per push, outside the lock).
    init(onUnacknowledged: @escaping @Sendable (ResultStore.Row, Device) -> Void) {
        self.onUnacknowledged = onUnacknowledged
    }

    /// Pushes whose answer is not settled yet.
    public var count: Int { pending.withLock { $0.count } }

    /// A push was recorded as `row`; its answer, with `apns-unique-id` `uniqueID`, is about to be written.
    func expect(_ uniqueID: String, row: ResultStore.Row, device: Device) {
        pending.withLock { $0[uniqueID] = Pending(stage: .expected, row: row, device: device) }
    }

    /// The answer's head is being written.
    func writing(_ uniqueID: String) {
        pending.withLock { $0[uniqueID]?.stage = .writing }
    }

    /// The answer was written to the connection (`true`), or could not be (`false`).
    func answered(_ uniqueID: String, written: Bool) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: uniqueID) }) else { return }
        if !written { onUnacknowledged(entry.row, entry.device) }
    }

    /// The request's channel closed: an answer that was never even started is not acknowledged.
    func channelClosed(_ uniqueID: String) {
        let entry = pending.withLock { pending -> Pending? in
            guard case .expected = pending[uniqueID]?.stage else { return nil }
            return pending.removeValue(forKey: uniqueID)
        }
        if let entry { onUnacknowledged(entry.row, entry.device) }
    }
}
