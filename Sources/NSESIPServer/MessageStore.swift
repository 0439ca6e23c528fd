import NSECrypto
import NSEJSON
import NSESIP
import NSESystem

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

    func json() -> JSON {
        [
            "version": 1,
            "id": .string(id),
            "aor": .string(aor),
            "call-id": .string(callID),
            "headers": .array(headers.map { [.string($0.0), .string($0.1)] }),
            "body": .string(Base64.encode(body)),
            "received-at": .int(receivedAt),
            "expires-at": .int(expiresAt),
            "delivered": .bool(delivered),
            "delivered-at": deliveredAt.map { JSON.int($0) } ?? .null,
            "attempts": .int(Int64(attempts)),
            "order": .int(order),
        ]
    }

    /// The on-disk form: compact JSON and a newline.
    func encoded() -> [UInt8] {
        var bytes = json().serializedBytes()
        bytes.append(0x0A)
        return bytes
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

    /// Decodes the on-disk form; nil when it is not valid JSON or lacks a field.
    init?(encoded bytes: [UInt8]) {
        guard let json = try? JSON.parse(bytes) else { return nil }
        self.init(json: json)
    }

    init?(json: JSON) {
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
        guard let directory else { return }
        if FileSystem.exists(directory), !FileSystem.isDirectory(directory) {
            throw SIPServerError("\(directory) exists and is not a directory")
        }
        do {
            try FileSystem.createDirectory(directory, mode: 0o700, parentMode: 0o700)
        } catch {
            throw SIPServerError("cannot create directory \(directory): \(error)")
        }
    }

    /// Persists a message durably (temp + fsync + rename + fsync of the directory).
    func save(_ message: HeldMessage) throws(SIPServerError) {
        guard let directory else { return }
        do {
            try FileSystem.writeAtomically(Path.join(directory, message.fileName), message.encoded(), mode: 0o600)
        } catch {
            throw SIPServerError("cannot save held message: \(error)")
        }
    }

    func remove(_ message: HeldMessage) {
        guard let directory else { return }
        try? FileSystem.remove(Path.join(directory, message.fileName))
        try? FileSystem.syncDirectory(directory)
    }

    /// Loads every stored message; unreadable files are skipped and reported.
    func loadAll() throws(SIPServerError) -> (messages: [HeldMessage], skipped: [String]) {
        guard let directory else { return ([], []) }
        var messages: [HeldMessage] = []
        var skipped: [String] = []
        let names: [String]
        do { names = try FileSystem.contents(ofDirectory: directory) } catch {
            throw SIPServerError("cannot open directory \(directory): \(error)")
        }
        // Temp files of interrupted writes: the rename never happened, so the previous state (if any) is authoritative.
        // `FileSystem.writeAtomically` names them `ID.json.tmp.PID`; older versions wrote `.ID.json.tmp`.
        for name in names where isTemporary(name) {
            try? FileSystem.remove(Path.join(directory, name))
        }
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            // `readFile` gives nil beyond the limit; `try?` folds that into a read failure.
            if let bytes = try? FileSystem.readFile(Path.join(directory, name), limit: 4 << 20),
                let message = HeldMessage(encoded: bytes)
            {
                messages.append(message)
            } else {
                skipped.append(name)
            }
        }
        messages.sort { ($0.order, $0.id) < ($1.order, $1.id) }
        return (messages, skipped)
    }

    private func isTemporary(_ name: String) -> Bool {
        if name.hasPrefix("."), name.hasSuffix(".json.tmp") { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[parts.count - 3] == "json", parts[parts.count - 2] == "tmp" else { return false }
        let pid = parts[parts.count - 1]
        return !pid.isEmpty && pid.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
