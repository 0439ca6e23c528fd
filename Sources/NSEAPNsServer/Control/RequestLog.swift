public import NSEJSON
import Synchronization

/// Every `POST /3/device` request `nse serve` received, as received, and the answer it got: what a push server's
/// tests read back (`GET /v1/requests`) to check what they sent. In memory, the newest `capacity` kept; the
/// payload's size only, never its content, and no credential (an `authorization` header is recorded by kind).
public final class RequestLog: Sendable {
    /// One request and its answer.
    public struct Entry: Sendable {
        public var sequence: Int = 0
        /// Unix milliseconds.
        public var receivedAt: Int64
        /// The `{token}` of the path, lowercase.
        public var token: String
        /// The request's headers, lower-cased names, in order; `authorization` reads `bearer (redacted)`.
        public var headers: [(name: String, value: String)]
        /// `token` (a provider token was sent), or `none`.
        public var authentication: String
        /// "2" or "1.1".
        public var httpVersion: String
        public var payloadBytes: Int?
        /// The answer's status; `nil` when the connection was closed instead (an injected GOAWAY).
        public var status: Int?
        /// The answer's reason (or the GOAWAY's).
        public var reason: String?
        public var apnsID: String?
        /// The answer's `apns-unique-id`, when it had one (a 200 in development).
        public var uniqueID: String?
        /// The injected fault's id, when one decided the answer (or delayed it).
        public var faultID: Int?
        /// The stream was reset instead of answered (an injected `rst_stream`).
        public var streamReset = false
        /// The fleet's node that serves the device and answered, when it is another (`--database`).
        public var forwardedTo: String?

        public init(
            receivedAt: Int64, token: String, headers: [(name: String, value: String)], authentication: String,
            httpVersion: String
        ) {
            self.receivedAt = receivedAt
            self.token = token.lowercased()
            self.headers = headers.map { header in
                header.name == "authorization"
                    ? (header.name, header.value.lowercased().hasPrefix("bearer ") ? "bearer (redacted)" : "(redacted)")
                    : header
            }
            self.authentication = authentication
            self.httpVersion = httpVersion
        }

        public var topic: String? { headers.first(where: { $0.name == "apns-topic" })?.value }

        public var json: JSON {
            var headerObject = JSONObject()
            for header in headers { headerObject[header.name] = .string(header.value) }
            var json: JSONObject = [
                "id": .int(sequence), "received_at": .int(receivedAt), "token": .string(token),
                "topic": .string(topic), "headers": .object(headerObject), "auth": .string(authentication),
                "http_version": .string(httpVersion), "payload_bytes": .int(payloadBytes),
                "status": .int(status), "goaway": .bool(status == nil && !streamReset),
                "rst_stream": .bool(streamReset), "reason": .string(reason),
                "apns_id": .string(apnsID),
                "apns_unique_id": .string(uniqueID), "fault": .int(faultID),
            ]
            if let forwardedTo { json["forwarded_to"] = .string(forwardedTo) }
            return .object(json)
        }
    }

    private struct State {
        /// A ring: `next` is where the next entry goes once it is full.
        var entries: [Entry] = []
        var next = 0
        var sequence = 0
        var dropped = 0
    }

    public let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: entries kept (the oldest go first); 0 records nothing.
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    public func record(_ entry: Entry) {
        guard capacity > 0 else { return }
        state.withLock { state in
            state.sequence += 1
            var entry = entry
            entry.sequence = state.sequence
            if state.entries.count < capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.next] = entry
                state.next = (state.next + 1) % capacity
                state.dropped += 1
            }
        }
    }

    /// Newest first, those above `since`, for `token`, `topic` and `uniqueID` (its answer's `apns-unique-id`, either
    /// case) when given, at most `limit`.
    public func entries(
        token: String? = nil, topic: String? = nil, uniqueID: String? = nil, since: Int = 0, limit: Int = .max
    ) -> [Entry] {
        let token = token?.lowercased()
        let uniqueID = uniqueID?.lowercased()
        let ordered = state.withLock { state in
            Array(state.entries[state.next...] + state.entries[..<state.next])
        }
        var found: [Entry] = []
        for entry in ordered.reversed() where found.count < limit {
            guard entry.sequence > since else { break }
            if let token, entry.token != token { continue }
            if let topic, entry.topic != topic { continue }
            if let uniqueID, entry.uniqueID?.lowercased() != uniqueID { continue }
            found.append(entry)
        }
        return found
    }

    /// Entries dropped to keep within the capacity since the last clear.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Forgets every entry (the sequence goes on, so `since` stays meaningful).
    public func clear() {
        state.withLock { state in
            state.entries = []
            state.next = 0
            state.dropped = 0
        }
    }
}
