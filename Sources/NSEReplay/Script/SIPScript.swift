public import NSEJSON
public import NSESIP

/// A recorded SIP exchange (`sip.script`): what the reference extension sent and received, timed, exactly as its
/// `info.sip_exchange` carries it (docs/protocol.md). `ScriptedSIPPeer` plays it back to the extension under replay.
public struct SIPScript: Sendable {
    /// Who sent an event's message: the extension (`sent`) or its peer (`received`).
    public enum Direction: String, Sendable {
        case sent
        case received
    }

    /// One recorded event.
    public struct Event: Sendable {
        /// What happened.
        public enum Kind: Sendable {
            /// A message, parsed.
            case message(SIPMessage)
            /// The peer closed the connection (or it failed).
            case closed
        }

        /// Milliseconds since the recording started.
        public var milliseconds: Double
        public var direction: Direction
        public var kind: Kind

        /// The message's request, if it is one.
        var request: SIPRequest? {
            if case .message(.request(let request)) = kind { request } else { nil }
        }

        /// The message's response, if it is one.
        var response: SIPResponse? {
            if case .message(.response(let response)) = kind { response } else { nil }
        }
    }

    /// A script that cannot be played: the field (under `sip.script`) and what is wrong, never a message's content.
    public struct Problem: Error, Sendable {
        public var field: String
        public var message: String
    }

    /// The most events a script may hold (a recording keeps 64).
    public static let maxEvents = 1024

    public var transport: SIPTransportKind
    /// The transport as a case names it (`udp`, `tcp`, `tls`).
    public var transportName: String { transport.rawValue }
    public var events: [Event]
    /// Events the recording left out at its end (`truncated`): the peer plays what was kept.
    public var truncated: Int
    /// The device's address of record: the To of the first REGISTER the extension sent.
    public var addressOfRecord: String
    /// The expiry that REGISTER asked for, if it said.
    public var registerExpires: Int?

    /// Reads a script; errors name the field below `field` (`sip.script.events[3].direction`).
    public init(json: JSON, field: String = "sip.script") throws(Problem) {
        func fail(_ path: String, _ message: String) -> Problem { Problem(field: field + path, message: message) }
        guard let object = json.objectValue else { throw fail("", "must be an object (a recorded sip_exchange)") }
        for key in object.keys where !["transport", "events", "truncated"].contains(key) {
            throw fail(".\(key)", "is not a script field (transport, events, truncated)")
        }
        guard let name = object["transport"]?.stringValue, let kind = SIPTransportKind(rawValue: name) else {
            throw fail(".transport", "must be udp, tcp or tls")
        }
        transport = kind
        if let left = object["truncated"] {
            guard let count = left.intValue, count >= 0 else {
                throw fail(".truncated", "must be a count of events, 0 or more")
            }
            truncated = Int(count)
        } else {
            truncated = 0
        }
        guard let list = object["events"]?.arrayValue, !list.isEmpty else {
            throw fail(".events", "must be a non-empty list of events")
        }
        guard list.count <= Self.maxEvents else { throw fail(".events", "holds more than \(Self.maxEvents) events") }
        var events: [Event] = []
        for (index, entry) in list.enumerated() {
            let path = ".events[\(index)]"
            events.append(try Self.event(entry, previous: events.last, fail: { fail(path + $0, $1) }))
        }
        self.events = events
        guard
            let register = events.first(where: {
                $0.direction == .sent && $0.request?.method.uppercased() == "REGISTER"
            }),
            let to = register.request?.headers.to
        else {
            throw fail(".events", "has no REGISTER sent with a To header (the device's address comes from it)")
        }
        addressOfRecord = to.uri.addressOfRecord.description
        registerExpires = register.request?.headers.expires
    }

    private static func event(
        _ entry: JSON, previous: Event?, fail: (String, String) -> Problem
    ) throws(Problem) -> Event {
        guard let object = entry.objectValue else { throw fail("", "must be an object") }
        for key in object.keys where !["at_ms", "direction", "message", "closed"].contains(key) {
            throw fail(".\(key)", "is not an event field (at_ms, direction, message, closed)")
        }
        guard let at = object["at_ms"]?.doubleValue, at >= 0, at <= 3_600_000 else {
            throw fail(".at_ms", "must be a number of milliseconds from 0 to 3600000")
        }
        if let previous, at < previous.milliseconds {
            throw fail(".at_ms", "must not be before the event above it (\(previous.milliseconds) ms)")
        }
        guard let name = object["direction"]?.stringValue, let direction = Direction(rawValue: name) else {
            throw fail(".direction", "must be sent or received")
        }
        switch (object["message"], object["closed"]) {
        case (nil, let closed?):
            guard closed == .bool(true) else { throw fail(".closed", "must be true") }
            guard direction == .received else {
                throw fail(".direction", "must be received for a closed event (the peer's close)")
            }
            return Event(milliseconds: at, direction: direction, kind: .closed)
        case (let message?, nil):
            guard let text = message.stringValue else { throw fail(".message", "must be a string (a SIP message)") }
            let parsed: SIPMessage
            do { parsed = try SIPParser.parse(text) } catch {
                throw fail(".message", "is not a SIP message: \(error.description)")
            }
            guard parsed.headers.callID != nil, parsed.headers.cseq != nil else {
                throw fail(".message", "needs a Call-ID and a CSeq (the peer matches messages by them)")
            }
            return Event(milliseconds: at, direction: direction, kind: .message(parsed))
        default:
            throw fail("", "needs message or closed, not both")
        }
    }
}
