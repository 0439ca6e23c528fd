public import NSEJSON
import Synchronization

/// The live feed behind `GET /v1/events`: every recorded result, in recording order, to every subscriber whose
/// filter matches. A subscriber that falls more than `bufferLimit` events behind loses the oldest (results are on
/// disk regardless: `GET /v1/devices/{token}/notifications`).
public final class EventHub: Sendable {
    /// One server-sent event.
    public struct Event: Sendable {
        public var id: Int
        public var name: String
        public var data: JSON

        /// The text/event-stream form: `id`, `event`, and the JSON on one `data` line; a keep-alive is a comment.
        public var text: String {
            name.isEmpty ? ": keep-alive\n\n" : "id: \(id)\nevent: \(name)\ndata: \(data.serialized())\n\n"
        }
    }

    private struct Subscriber {
        var tokens: Set<String>?
        var continuation: AsyncStream<Event>.Continuation
    }

    private struct State {
        var nextEventID = 1
        var nextSubscriberID = 0
        var subscribers: [Int: Subscriber] = [:]
        var closed = false
    }

    public static let bufferLimit = 4096
    private let state = Mutex(State())

    public init() {}

    /// A new subscription.
    /// - Parameter tokens: the device tokens (lowercase) to follow; `nil` follows every device.
    /// - Returns: its id (for ``unsubscribe(_:)``) and its events; the stream ends on ``close()``.
    public func subscribe(tokens: Set<String>?) -> (id: Int, events: AsyncStream<Event>) {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id = state.withLock { state -> Int? in
            guard !state.closed else { return nil }
            state.nextSubscriberID += 1
            state.subscribers[state.nextSubscriberID] = Subscriber(tokens: tokens, continuation: continuation)
            return state.nextSubscriberID
        }
        guard let id else {
            continuation.finish()
            return (0, stream)
        }
        return (id, stream)
    }

    /// Ends one subscription.
    public func unsubscribe(_ id: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: id) }?.continuation.finish()
    }

    /// Sends a recorded result to the subscribers following any of `tokens`.
    public func publish(_ name: String, _ data: JSON, tokens: [String]) {
        state.withLock { state in
            let event = Event(id: state.nextEventID, name: name, data: data)
            state.nextEventID += 1
            for (_, subscriber) in state.subscribers
            where subscriber.tokens.map({ !$0.isDisjoint(with: tokens) }) ?? true {
                subscriber.continuation.yield(event)
            }
        }
    }

    /// Sends one subscriber a keep-alive comment.
    public func keepAlive(_ id: Int) {
        state.withLock { $0.subscribers[id] }?.continuation.yield(Event(id: 0, name: "", data: .null))
    }

    /// Subscribers now following.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every stream and refuses new ones: the server is stopping.
    public func close() {
        let subscribers = state.withLock { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}
