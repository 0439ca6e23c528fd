public import NSEDatabase
import NSEJSON
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The App Group container's shared database, `DIR/app-group.db`, as liblinphone keeps its shared state in one
/// SQLite file inside the App Group: the messages kept for later pushes, the strikes against the app and the call
/// log. Any number of extension processes (and the host) use it at once; every change is one transaction.
public final class AppGroupStore: Sendable {
    /// The file name inside the container.
    public static let fileName = "app-group.db"

    /// Version 1: messages (held for a later push, or shown and remembered so a copy is not shown again), strikes,
    /// calls. Version 2: messages may be claimed. Version 3: expired held messages are kept as unnotified.
    static let schema = [
        """
        CREATE TABLE messages (
            call_id TEXT PRIMARY KEY NOT NULL,
            sender TEXT NOT NULL,
            recipient TEXT NOT NULL,
            content_type TEXT NOT NULL,
            body BLOB NOT NULL,
            received_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('held', 'shown')),
            shown_at INTEGER
        );
        CREATE INDEX messages_by_state ON messages (state, received_at);
        CREATE TABLE strikes (id INTEGER PRIMARY KEY AUTOINCREMENT, reason TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, entry TEXT NOT NULL);
        """,
        // Version 2: a message taken from the store is *claimed* by one extension process (with its pid and the
        // time) until that process has handed its content to the host, so a process killed in between leaves it in
        // the store instead of losing it. SQLite cannot change a CHECK in place: the table is rebuilt.
        """
        CREATE TABLE messages_v2 (
            call_id TEXT PRIMARY KEY NOT NULL,
            sender TEXT NOT NULL,
            recipient TEXT NOT NULL,
            content_type TEXT NOT NULL,
            body BLOB NOT NULL,
            received_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('held', 'claimed', 'shown')),
            shown_at INTEGER,
            claimed_at INTEGER,
            claimed_by INTEGER
        );
        INSERT INTO messages_v2 (call_id, sender, recipient, content_type, body, received_at, state, shown_at)
            SELECT call_id, sender, recipient, content_type, body, received_at, state, shown_at FROM messages;
        DROP TABLE messages;
        ALTER TABLE messages_v2 RENAME TO messages;
        CREATE INDEX messages_by_state ON messages (state, received_at);
        """,
        // Version 3: a held message that no push named within its lifetime is kept, body and all, as *unnotified*
        // (the device answered 200 for it: it is the app's to show in its history) instead of being deleted.
        """
        CREATE TABLE messages_v3 (
            call_id TEXT PRIMARY KEY NOT NULL,
            sender TEXT NOT NULL,
            recipient TEXT NOT NULL,
            content_type TEXT NOT NULL,
            body BLOB NOT NULL,
            received_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('held', 'claimed', 'shown', 'unnotified')),
            shown_at INTEGER,
            claimed_at INTEGER,
            claimed_by INTEGER
        );
        INSERT INTO messages_v3 SELECT * FROM messages;
        DROP TABLE messages;
        ALTER TABLE messages_v3 RENAME TO messages;
        CREATE INDEX messages_by_state ON messages (state, received_at);
        """,
        // Version 4: the shared core (who runs the app's SIP core: the main app or extension processes, each with a
        // heartbeat), and who showed a message: a notification (`extension`) or the app in the foreground (`app`).
        """
        CREATE TABLE core_holders (
            pid INTEGER PRIMARY KEY NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('main', 'executor')),
            state TEXT NOT NULL CHECK (state IN ('started', 'waiting', 'stopping', 'stopped')),
            heartbeat_at INTEGER NOT NULL
        );
        ALTER TABLE messages ADD COLUMN shown_by TEXT;
        """,
        // Version 5: the senders the device trusts (their Ed25519 keys, several per contact while one is rotated) and
        // the ids of the signed messages it has seen (a replayed envelope is not shown twice).
        """
        CREATE TABLE trusted_keys (
            contact TEXT NOT NULL,
            public_key TEXT NOT NULL,
            added_at INTEGER NOT NULL,
            PRIMARY KEY (contact, public_key)
        );
        CREATE TABLE seen_messages (message_id TEXT PRIMARY KEY NOT NULL, seen_at INTEGER NOT NULL);
        """,
        // Version 6: the chat rooms the app joined (their subject and participants, as the room's state said them),
        // so that a push for a message in a room is titled with its subject.
        """
        CREATE TABLE rooms (
            address TEXT PRIMARY KEY NOT NULL,
            subject TEXT NOT NULL,
            participants TEXT NOT NULL,
            joined_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        );
        """,
    ]

    public let database: Database
    public let messages: MessageStore
    public let voip: VoIPState
    public let trust: TrustStore
    public let rooms: RoomStore

    /// Opens (creating) the database of the container at `directory`, importing the files older nse versions kept
    /// (`store/*.json`, `voip/strikes.json`, `voip/calls.jsonl`) the first time.
    public init(containerDirectory directory: String) throws(DeviceError) {
        do {
            database = try Database(path: Path.join(directory, Self.fileName), schema: Self.schema)
        } catch {
            throw DeviceError(error.code == .corrupt ? .corrupt : .io, "App Group store: \(error.message)")
        }
        messages = MessageStore(database: database)
        voip = VoIPState(database: database)
        trust = TrustStore(database: database)
        rooms = RoomStore(database: database)
        try LegacyImport(container: directory, store: self).run()
    }
}

extension AppGroupStore {
    /// The shared core's claims, cleared when not refreshed for `watchdogSeconds` (the device's setting).
    public func sharedCore(watchdogSeconds: Double) -> SharedCore {
        SharedCore(database: database, watchdogMilliseconds: Int64(watchdogSeconds * 1000))
    }
}

extension DatabaseError {
    /// The device-level error for a failed App Group store operation.
    var deviceError: DeviceError { deviceError(in: "App Group store") }

    /// The device-level error for a failed operation on one of the device's databases, named `store`.
    func deviceError(in store: String) -> DeviceError {
        DeviceError(code == .corrupt ? .corrupt : .io, "\(store): \(message)")
    }
}

/// The files nse kept before the database: imported once, then renamed `*.imported` so they are never read again.
struct LegacyImport {
    let container: String
    let store: AppGroupStore

    func run() throws(DeviceError) {
        let messages = Path.join(container, "store")
        if FileSystem.isDirectory(messages) { try importMessages(messages) }
        let strikes = Path.join(container, "voip", "strikes.json")
        if FileSystem.exists(strikes) { try importStrikes(strikes) }
        let calls = Path.join(container, "voip", "calls.jsonl")
        if FileSystem.exists(calls) { try importCalls(calls) }
    }

    private func importMessages(_ folder: String) throws(DeviceError) {
        let names = (try? FileSystem.contents(ofDirectory: folder)) ?? []
        for name in names where name.hasSuffix(".json") {
            guard let bytes = try? FileSystem.readFile(Path.join(folder, name), limit: 1 << 20),
                let json = try? JSON.parse(bytes), let message = StoredMessage(json: json)
            else { continue }
            _ = try store.messages.keep(message, now: message.receivedAt)
        }
        retire(folder)
    }

    private func importStrikes(_ path: String) throws(DeviceError) {
        if let bytes = try? FileSystem.readFile(path, limit: 64 * 1024), let json = try? JSON.parse(bytes) {
            let count = Int(json["count"]?.intValue ?? 0)
            let reason = json["last_reason"]?.stringValue ?? "imported"
            for _ in 0..<max(0, min(count, 1000)) { try store.voip.recordStrike(reason: reason) }
        }
        retire(path)
    }

    private func importCalls(_ path: String) throws(DeviceError) {
        if let text = try? FileSystem.readText(path, limit: 4 << 20) {
            for line in text.split(separator: "\n") {
                guard let entry = (try? JSON.parse(String(line)))?.objectValue else { continue }
                try store.voip.record(entry, at: entry["at"]?.intValue ?? SystemClock.unixMilliseconds())
            }
        }
        retire(path)
    }

    /// Renames an imported file or folder aside (another process may have done it already).
    private func retire(_ path: String) {
        rename(path, path + ".imported")
    }
}
