public import NSEJSON
import Synchronization

/// Every request `nse files` answered (the control API's own apart), as asked and answered: what a client's tests
/// read back (`GET /control/requests`) to see which ranges it asked for and how much it got. In memory, the newest
/// `capacity` kept.
public final class RequestLog: Sendable {
    /// One request and its answer.
    public struct Entry: Sendable {
        /// A sequence number, from 1.
        public var id = 0
        /// Unix milliseconds.
        public var receivedAt: Int64
        public var method: String
        /// As sent, query included.
        public var path: String
        /// "1.1" or "2".
        public var httpVersion: String
        /// The file the request was for, once it is known (an upload's new id, a download's).
        public var file: String?
        /// The `Range` header as sent.
        public var range: String?
        /// The answer's status; nil until the answer is made.
        public var status: Int?
        /// Body bytes received (an upload's).
        public var bytesReceived = 0
        /// Body bytes sent.
        public var bytesSent = 0
        /// Whether the answer's body went out whole (false: cut by a `truncate` fault, the client gone, the server
        /// stopping).
        public var complete = false
        /// The faults applied, by name.
        public var faults: [String] = []

        public init(receivedAt: Int64, method: String, path: String, httpVersion: String, range: String?) {
            self.receivedAt = receivedAt
            self.method = method
            self.path = path
            self.httpVersion = httpVersion
            self.range = range
        }

        public var json: JSON {
            [
                "id": .int(Int64(id)), "received_at": .int(receivedAt), "method": .string(method),
                "path": .string(path), "http_version": .string(httpVersion), "file": .string(file),
                "range": .string(range), "status": .int(status), "bytes_received": .int(Int64(bytesReceived)),
                "bytes_sent": .int(Int64(bytesSent)), "complete": .bool(complete),
                "faults": .array(faults.map(JSON.string)),
            ]
        }
    }

    private struct State {
        /// A ring once full: `next` is where the next entry goes.
        var entries: [Entry] = []
        var next = 0
        var sequence = 0
    }

    public let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: entries kept (the oldest go first); 0 keeps none.
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    func record(_ entry: Entry) {
        guard capacity > 0 else { return }
        state.withLock { state in
            state.sequence += 1
            var entry = entry
            entry.id = state.sequence
            if state.entries.count < capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.next] = entry
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// Newest first: those with an id above `since`, at most `limit`.
    public func entries(since: Int = 0, limit: Int = .max) -> [Entry] {
        let ordered = state.withLock { Array($0.entries[$0.next...] + $0.entries[..<$0.next]) }
        return Array(ordered.reversed().prefix { $0.id > since }.prefix(limit))
    }

    /// Forgets every entry (ids go on, so `since` keeps its meaning).
    public func clear() {
        state.withLock { state in
            state.entries = []
            state.next = 0
        }
    }
}
