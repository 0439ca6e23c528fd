import NSECrypto
import NSEJSON
import NSESIP
import NSESystem

/// A MESSAGE kept for fork-late delivery.
struct HeldMessage: Sendable {
    /// Where the message stands: waiting for a device, or answered 2xx by one.
    enum Delivery: Sendable, Equatable {
        case pending
        /// A device answered 2xx at this time (Unix seconds).
        case delivered(at: Int64)
    }

    var id: String
    var aor: String
    var callID: String
    /// Original header fields to replay (From with tag, To, Content-Type, extension headers), wire order.
    var headers: [(String, String)]
    var body: [UInt8]
    var receivedAt: Int64
    var expiresAt: Int64
    var delivery: Delivery
    /// Deliveries attempted so far (used for the CSeq of the next one).
    var attempts: Int
    /// Arrival order (wall-clock nanoseconds, bumped to stay strictly increasing).
    var order: Int64

    var isDelivered: Bool { delivery != .pending }

    init(
        id: String, aor: String, callID: String, headers: [(String, String)], body: [UInt8], receivedAt: Int64,
        expiresAt: Int64, delivery: Delivery = .pending, attempts: Int = 0, order: Int64
    ) {
        self.id = id
        self.aor = aor
        self.callID = callID
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
        self.delivery = delivery
        self.attempts = attempts
        self.order = order
    }
}

extension HeldMessage {
    /// Header fields of a sender's MESSAGE not replayed to the device: its routing, credentials and framing.
    private static let droppedHeaders: Set<String> = [
        "via", "route", "record-route", "max-forwards", "cseq", "content-length", "authorization",
        "proxy-authorization", "proxy-require", "contact", "path",
    ]

    /// A sender's MESSAGE for `aor` as it is kept and replayed: its other header fields (wire order) and body,
    /// received `now` (Unix seconds) and kept for `lifetime` seconds.
    init(request: SIPRequest, id: String, aor: String, now: Int64, lifetime: Int, order: Int64) {
        var headers: [(String, String)] = []
        for field in request.headers where !HeldMessage.droppedHeaders.contains(ASCII.lowercased(field.name)) {
            headers.append((field.name, field.value))
        }
        self.init(
            id: id, aor: aor, callID: request.headers.callID ?? "", headers: headers, body: request.body,
            receivedAt: now, expiresAt: now + Int64(lifetime), order: order)
    }

    /// The header fields as stored in the database: a JSON array of `[name, value]` pairs.
    var headersJSON: String { JSON.array(headers.map { [.string($0.0), .string($0.1)] }).serialized() }

    /// Decodes `headersJSON`; nil when it is not an array of string pairs.
    static func headers(fromJSON text: String) -> [(String, String)]? {
        guard let items = (try? JSON.parse(text, options: JSONParseOptions(requireObject: false)))?.arrayValue else {
            return nil
        }
        return headers(from: items)
    }

    private static func headers(from items: [JSON]) -> [(String, String)]? {
        var headers: [(String, String)] = []
        for item in items {
            guard let pair = item.arrayValue, pair.count == 2, let name = pair[0].stringValue,
                let value = pair[1].stringValue
            else { return nil }
            headers.append((name, value))
        }
        return headers
    }

    /// Decodes a file of the one-JSON-file-per-message directory nse used before its database (imported once, on
    /// the first start with a database); nil when it is not valid JSON or lacks a field.
    init?(legacyFile bytes: [UInt8]) {
        guard let json = try? JSON.parse(bytes), let id = json["id"]?.stringValue, let aor = json["aor"]?.stringValue,
            let callID = json["call-id"]?.stringValue, let headerItems = json["headers"]?.arrayValue,
            let bodyText = json["body"]?.stringValue, let body = Base64.decode(bodyText),
            let receivedAt = json["received-at"]?.intValue, let expiresAt = json["expires-at"]?.intValue,
            let delivered = json["delivered"]?.boolValue, let headers = HeldMessage.headers(from: headerItems)
        else { return nil }
        let delivery: Delivery = delivered ? .delivered(at: json["delivered-at"]?.intValue ?? receivedAt) : .pending
        self.init(
            id: id, aor: aor, callID: callID, headers: headers, body: body, receivedAt: receivedAt,
            expiresAt: expiresAt, delivery: delivery, attempts: Int(json["attempts"]?.intValue ?? 0),
            order: json["order"]?.intValue ?? receivedAt * 1_000_000_000)
    }
}
