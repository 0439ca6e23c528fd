import NSECrypto
import NSEJSON
import NSESIP
import NSESystem

/// A MESSAGE kept for fork-late delivery, to each device registered for its AOR when it arrived.
struct HeldMessage: Sendable {
    /// Where the message stands, for one device or as a whole.
    enum Delivery: Sendable, Equatable {
        case pending
        /// A device answered 2xx at this time (Unix seconds); as a whole, the last of its recipients did.
        case delivered(at: Int64)
    }

    /// One device the message is for: a binding of the AOR (its registrar key: `instance:<+sip.instance>`, else
    /// `prid:<push token>`, else `uri:<contact>`), as Flexisip's fork context keeps one branch per device.
    struct Recipient: Sendable, Equatable {
        var device: String
        var delivery: Delivery

        /// A device key as a log line may show it: an instance in full, a push token or contact only by its kind.
        static func loggable(_ device: String) -> String {
            device.hasPrefix("instance:") ? device : String(device.prefix { $0 != ":" })
        }
    }

    var id: String
    var aor: String
    var callID: String
    /// Original header fields to replay (From with tag, To, Content-Type, extension headers), wire order.
    var headers: [(String, String)]
    var body: [UInt8]
    var receivedAt: Int64
    var expiresAt: Int64
    /// The message as a whole: delivered once every recipient has it.
    var delivery: Delivery
    /// The devices it is for, in registration order. Empty for a message held before per-device delivery (a
    /// database of an older nse): then any device's 2xx delivers it, as it did.
    var recipients: [Recipient]
    /// Deliveries attempted so far (used for the CSeq of the next one).
    var attempts: Int
    /// Arrival order (wall-clock nanoseconds, bumped to stay strictly increasing).
    var order: Int64

    var isDelivered: Bool { delivery != .pending }

    /// The recipients still waiting for it (none once it is delivered as a whole).
    var pendingDevices: [String] {
        isDelivered ? [] : recipients.filter { $0.delivery == .pending }.map(\.device)
    }

    /// Whether `device` is still to get it: a pending recipient, or any device for a message without recipients.
    func awaits(device: String) -> Bool {
        guard !isDelivered else { return false }
        guard !recipients.isEmpty else { return true }
        return recipients.contains { $0.device == device && $0.delivery == .pending }
    }

    /// Records `device`'s 2xx at `time`; the message as a whole is delivered once no recipient waits (at once for
    /// one without recipients, or when `device` is nil). False when it changed nothing (not awaited by `device`).
    mutating func markDelivered(device: String?, at time: Int64) -> Bool {
        guard !isDelivered else { return false }
        if let device, !recipients.isEmpty {
            guard let index = recipients.firstIndex(where: { $0.device == device && $0.delivery == .pending })
            else { return false }
            recipients[index].delivery = .delivered(at: time)
            if recipients.allSatisfy({ $0.delivery != .pending }) { delivery = .delivered(at: time) }
        } else {
            delivery = .delivered(at: time)
        }
        return true
    }

    init(
        id: String, aor: String, callID: String, headers: [(String, String)], body: [UInt8], receivedAt: Int64,
        expiresAt: Int64, delivery: Delivery = .pending, recipients: [Recipient] = [], attempts: Int = 0,
        order: Int64
    ) {
        self.id = id
        self.aor = aor
        self.callID = callID
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
        self.delivery = delivery
        self.recipients = recipients
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
    /// received `now` (Unix seconds) and kept for `lifetime` seconds, for `devices` (the AOR's bindings now).
    init(
        request: SIPRequest, id: String, aor: String, devices: [String] = [], now: Int64, lifetime: Int, order: Int64
    ) {
        var headers: [(String, String)] = []
        for field in request.headers where !HeldMessage.droppedHeaders.contains(ASCII.lowercased(field.name)) {
            headers.append((field.name, field.value))
        }
        self.init(
            id: id, aor: aor, callID: request.headers.callID ?? "", headers: headers, body: request.body,
            receivedAt: now, expiresAt: now + Int64(lifetime),
            recipients: devices.map { Recipient(device: $0, delivery: .pending) }, order: order)
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
