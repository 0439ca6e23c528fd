#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NSEJSON
import NSECrypto
public import NSESystem

/// A SIP MESSAGE kept in the App Group's shared store, for a later push that names its Call-ID.
public struct StoredMessage: Sendable, Equatable {
    public var callID: String
    public var from: String
    public var to: String
    public var contentType: String
    /// The body as received (an envelope, CPIM, or plain text).
    public var body: [UInt8]
    /// Unix milliseconds.
    public var receivedAt: Int64

    public init(callID: String, from: String, to: String, contentType: String, body: [UInt8], receivedAt: Int64) {
        self.callID = callID
        self.from = from
        self.to = to
        self.contentType = contentType
        self.body = body
        self.receivedAt = receivedAt
    }

    var json: JSON {
        [
            "call_id": .string(callID), "from": .string(from), "to": .string(to), "content_type": .string(contentType),
            "body": .string(Base64.encode(body)), "received_at": .int(receivedAt),
        ]
    }

    init?(json: JSON) {
        guard let callID = json["call_id"]?.stringValue, let body = json["body"]?.stringValue.flatMap(Base64.decode),
            let receivedAt = json["received_at"]?.intValue
        else { return nil }
        self.init(
            callID: callID, from: json["from"]?.stringValue ?? "", to: json["to"]?.stringValue ?? "",
            contentType: json["content_type"]?.stringValue ?? "", body: body, receivedAt: receivedAt)
    }
}

/// The shared message store: one file per Call-ID under the container's `store/`, written atomically, so any
/// number of extension processes can use it at once. A message is handed out exactly once: taking it renames
/// its file first, and only the process whose rename succeeds gets it. Entries expire after 5 minutes, as
/// liblinphone's do.
public struct MessageStore: Sendable {
    public let directory: String
    /// How long a message is kept, in milliseconds.
    public var lifetimeMilliseconds: Int64

    public init(directory: String, lifetimeMilliseconds: Int64 = 5 * 60 * 1000) {
        self.directory = directory
        self.lifetimeMilliseconds = lifetimeMilliseconds
    }

    /// The file name for a Call-ID: a hash, since Call-IDs may hold any character.
    func fileName(_ callID: String) -> String {
        let digest = (try? Digest.sha256(Array(callID.utf8))) ?? Array(callID.utf8.prefix(32))
        return Base64.encodeURLSafe(Array(digest.prefix(18))) + ".json"
    }

    /// Keeps a message; a Call-ID already stored (a retransmission or duplicate) is kept once.
    /// - Returns: whether it was new.
    @discardableResult
    public func put(_ message: StoredMessage) throws(SystemError) -> Bool {
        try FileSystem.createDirectory(directory, mode: 0o755)
        let path = Path.join(directory, fileName(message.callID))
        if FileSystem.exists(path) { return false }
        try FileSystem.writeAtomically(path, message.json.serializedBytes(), mode: 0o600)
        return true
    }

    /// Takes the message with this Call-ID out of the store, if it is there and fresh.
    public func take(callID: String, now: Int64 = Clock.unixMilliseconds()) -> StoredMessage? {
        let path = Path.join(directory, fileName(callID))
        let claimed = "\(path).taken.\(getpid())"
        guard rename(path, claimed) == 0 else { return nil }
        defer { unlink(claimed) }
        guard let bytes = try? FileSystem.readFile(claimed, limit: 1024 * 1024),
            let json = try? JSON.parse(bytes), let message = StoredMessage(json: json), message.callID == callID,
            now - message.receivedAt <= lifetimeMilliseconds
        else { return nil }
        return message
    }

    /// Whether a fresh message with this Call-ID is stored.
    public func contains(callID: String) -> Bool {
        FileSystem.exists(Path.join(directory, fileName(callID)))
    }

    /// Removes expired entries (and claims left by crashed processes); returns how many were removed.
    @discardableResult
    public func purge(now: Int64 = Clock.unixMilliseconds()) -> Int {
        guard let names = try? FileSystem.contents(ofDirectory: directory) else { return 0 }
        var removed = 0
        for name in names {
            let path = Path.join(directory, name)
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            let modified = Int64(info.st_mtim.tv_sec) * 1000
            if now - modified > lifetimeMilliseconds {
                unlink(path)
                removed += 1
            }
        }
        return removed
    }

    /// Every fresh message, oldest first.
    public func all(now: Int64 = Clock.unixMilliseconds()) -> [StoredMessage] {
        guard let names = try? FileSystem.contents(ofDirectory: directory) else { return [] }
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            guard let bytes = try? FileSystem.readFile(Path.join(directory, name), limit: 1024 * 1024),
                let json = try? JSON.parse(bytes), let message = StoredMessage(json: json),
                now - message.receivedAt <= lifetimeMilliseconds
            else { return nil }
            return message
        }.sorted { $0.receivedAt < $1.receivedAt }
    }
}
