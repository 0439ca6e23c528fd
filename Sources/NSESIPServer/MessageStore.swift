import NSESIP

/// A MESSAGE kept for fork-late delivery.
struct HeldMessage: Sendable {
    var id: String
    var aor: String
    var callID: String
    /// Original header fields to replay (From with tag, To, Content-Type, extension headers), wire order.
    var headers: [(String, String)]
    var body: [UInt8]
    var receivedAt: Int64
    var expiresAt: Int64
    var delivered: Bool
    var deliveredAt: Int64?
    /// Deliveries attempted so far (used for the CSeq of the next one).
    var attempts: Int
    /// Arrival order (wall-clock nanoseconds, bumped to stay strictly increasing).
    var order: Int64

    var fileName: String { id + ".json" }

    func json() -> JSONValue {
        .object([
            ("version", .int(1)),
            ("id", .string(id)),
            ("aor", .string(aor)),
            ("call-id", .string(callID)),
            ("headers", .array(headers.map { .array([.string($0.0), .string($0.1)]) })),
            ("body", .string(Base64.encode(body))),
            ("received-at", .int(receivedAt)),
            ("expires-at", .int(expiresAt)),
            ("delivered", .bool(delivered)),
            ("delivered-at", deliveredAt.map { .int($0) } ?? .null),
            ("attempts", .int(Int64(attempts))),
            ("order", .int(order)),
        ])
    }

    init(id: String, aor: String, callID: String, headers: [(String, String)], body: [UInt8], receivedAt: Int64,
         expiresAt: Int64, delivered: Bool = false, deliveredAt: Int64? = nil, attempts: Int = 0, order: Int64) {
        self.id = id
        self.aor = aor
        self.callID = callID
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
        self.expiresAt = expiresAt
        self.delivered = delivered
        self.deliveredAt = deliveredAt
        self.attempts = attempts
        self.order = order
    }

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let aor = json["aor"]?.stringValue,
              let callID = json["call-id"]?.stringValue, let headerItems = json["headers"]?.arrayValue,
              let bodyText = json["body"]?.stringValue, let body = Base64.decode(bodyText),
              let receivedAt = json["received-at"]?.intValue, let expiresAt = json["expires-at"]?.intValue,
              let delivered = json["delivered"]?.boolValue else { return nil }
        var headers: [(String, String)] = []
        for item in headerItems {
            guard let pair = item.arrayValue, pair.count == 2, let n = pair[0].stringValue, let v = pair[1].stringValue else { return nil }
            headers.append((n, v))
        }
        self.init(id: id, aor: aor, callID: callID, headers: headers, body: body, receivedAt: receivedAt,
                  expiresAt: expiresAt, delivered: delivered, deliveredAt: json["delivered-at"]?.intValue,
                  attempts: Int(json["attempts"]?.intValue ?? 0), order: json["order"]?.intValue ?? receivedAt * 1_000_000_000)
    }
}

/// One JSON file per held message in a directory (or memory only when no directory is configured).
struct MessageStore: Sendable {
    let directory: String?

    init(directory: String?) throws(SIPServerError) {
        self.directory = directory
        if let directory { try FileSystem.makeDirectory(directory) }
    }

    /// Persists a message durably (temp + fsync + rename).
    func save(_ message: HeldMessage) throws(SIPServerError) {
        guard let directory else { return }
        var bytes = message.json().serialized()
        bytes.append(0x0A)
        try FileSystem.writeAtomically(directory: directory, name: message.fileName, bytes: bytes)
    }

    func remove(_ message: HeldMessage) {
        guard let directory else { return }
        FileSystem.remove(directory + "/" + message.fileName)
        FileSystem.syncDirectory(directory)
    }

    /// Loads every stored message; unreadable files are skipped and reported.
    func loadAll() throws(SIPServerError) -> (messages: [HeldMessage], skipped: [String]) {
        guard let directory else { return ([], []) }
        var messages: [HeldMessage] = []
        var skipped: [String] = []
        let names = try FileSystem.listDirectory(directory)
        // Temp files of interrupted writes: the rename never happened, so the previous state (if any) is authoritative.
        for name in names where name.hasPrefix(".") && name.hasSuffix(".json.tmp") {
            FileSystem.remove(directory + "/" + name)
        }
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            do {
                let bytes = try FileSystem.readFile(directory + "/" + name)
                let json = try JSONValue.parse(bytes)
                if let message = HeldMessage(json: json) { messages.append(message) } else { skipped.append(name) }
            } catch {
                skipped.append(name)
            }
        }
        messages.sort { ($0.order, $0.id) < ($1.order, $1.id) }
        return (messages, skipped)
    }
}
