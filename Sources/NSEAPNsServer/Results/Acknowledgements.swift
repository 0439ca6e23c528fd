import NIOCore
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
        /// The connection (HTTP/1.1) or stream (HTTP/2) the answer goes out on, once known.
        var channel: ObjectIdentifier?
    }

    struct State: Sendable {
        var pending: [String: Pending] = [:]
        /// Channels with a close watch: one per channel however many pushes it carries (a kept-alive HTTP/1.1
        /// connection may carry millions, and a close callback per push would pile up until it closes).
        var watched: Set<ObjectIdentifier> = []
    }

    private let state = Mutex(State())
    private let onUnacknowledged: @Sendable (ResultStore.Row, Device) -> Void

    /// - Parameter onUnacknowledged: marks a row (called at most once per push, outside the lock).
    init(onUnacknowledged: @escaping @Sendable (ResultStore.Row, Device) -> Void) {
        self.onUnacknowledged = onUnacknowledged
    }

    /// Pushes whose answer is not settled yet.
    public var count: Int { state.withLock { $0.pending.count } }

    /// Channels with a close watch.
    public var watchedChannels: Int { state.withLock { $0.watched.count } }

    /// A push was recorded as `row`; its answer, with `apns-unique-id` `uniqueID`, is about to be written.
    func expect(_ uniqueID: String, row: ResultStore.Row, device: Device) {
        state.withLock { $0.pending[uniqueID] = Pending(stage: .expected, row: row, device: device) }
    }

    /// The answer goes out on `channel`. Returns whether the channel needs a close watch (its first push), which
    /// then calls ``channelClosed(_:)``.
    func watch(_ uniqueID: String, on channel: ObjectIdentifier) -> Bool {
        state.withLock { state in
            state.pending[uniqueID]?.channel = channel
            return state.watched.insert(channel).inserted
        }
    }

    /// The answer goes out on `channel`: one that closes before the answer's head was even written leaves the push
    /// unacknowledged. One close callback per channel, however many pushes it carries.
    func watchAnswer(_ uniqueID: String, on channel: any Channel) {
        let id = ObjectIdentifier(channel)
        guard watch(uniqueID, on: id) else { return }
        // Weak: a channel that outlives the service (HummingbirdTesting's request channels are never closed) must
        // not keep the service's store and store threads alive.
        channel.closeFuture.whenComplete { [weak self] _ in self?.channelClosed(id) }
    }

    /// The answer's head is being written.
    func writing(_ uniqueID: String) {
        state.withLock { $0.pending[uniqueID]?.stage = .writing }
    }

    /// The answer was written to the connection (`true`), or could not be (`false`).
    func answered(_ uniqueID: String, written: Bool) {
        guard let entry = state.withLock({ $0.pending.removeValue(forKey: uniqueID) }) else { return }
        if !written { onUnacknowledged(entry.row, entry.device) }
    }

    /// A channel closed: the answers on it that were never even started are not acknowledged (those being written
    /// are settled by ``AnswerObserver``).
    func channelClosed(_ channel: ObjectIdentifier) {
        let lost = state.withLock { state -> [Pending] in
            state.watched.remove(channel)
            let ids = state.pending.compactMap { id, entry -> String? in
                guard entry.channel == channel, case .expected = entry.stage else { return nil }
                return id
            }
            return ids.compactMap { state.pending.removeValue(forKey: $0) }
        }
        for entry in lost { onUnacknowledged(entry.row, entry.device) }
    }
}
