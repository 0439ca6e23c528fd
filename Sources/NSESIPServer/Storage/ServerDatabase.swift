import Logging
import NSEDatabase
import NSESIP
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A binding as the database keeps it: enough to push to the device, and to reach it again over UDP, after a restart.
struct StoredBinding: Sendable, Equatable {
    var aor: String
    /// The registrar's key of the binding within its AOR (`instance:…`, `prid:…` or `uri:…`).
    var key: String
    /// The Contact as registered (name-addr with its parameters; RFC 8599 push parameters are in its URI).
    var contact: String
    var instance: String?
    /// The granted lifetime (seconds) and when it ends (Unix seconds).
    var expires: Int
    var expiresAt: Int64
    /// How the REGISTER came in: the transport, the device's source address and the listener's port.
    var transport: SIPTransportKind
    var remoteHost: String
    var remotePort: Int
    var localPort: Int
}

/// The server's durable state in one SQLite file, `DIR/sip-server.db`: bindings with their expiry and held messages
/// with their delivery state. Every change is one transaction, committed before the server answers; the server keeps
/// its working copy in memory and writes through.
final class ServerDatabase: Sendable {
    static let fileName = "sip-server.db"
    /// Where unreadable files of the old one-JSON-file-per-message layout are moved.
    static let unreadableFolder = "unreadable"

    /// What opening the database did to files of the old layout.
    struct Migration: Sendable {
        var imported = 0
        /// Names of files that could not be read; moved to `unreadable/`.
        var unreadable: [String] = []
    }

    /// The migrations (``Database``): version 1, bindings keyed by AOR and binding key and held messages with their
    /// delivery time (NULL = pending); version 2, each held message's devices with their own delivery time; version 3,
    /// chat rooms.
    static let schema = [
        """
        CREATE TABLE binding (
            aor TEXT NOT NULL,
            key TEXT NOT NULL,
            contact TEXT NOT NULL,
            instance TEXT,
            expires INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            transport TEXT NOT NULL,
            remote_host TEXT NOT NULL,
            remote_port INTEGER NOT NULL,
            local_port INTEGER NOT NULL,
            PRIMARY KEY (aor, key)
        ) WITHOUT ROWID;
        CREATE INDEX binding_expiry ON binding (expires_at);
        CREATE TABLE held_message (
            id TEXT PRIMARY KEY NOT NULL,
            aor TEXT NOT NULL,
            call_id TEXT NOT NULL,
            headers TEXT NOT NULL,
            body BLOB NOT NULL,
            received_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            delivered_at INTEGER,
            attempts INTEGER NOT NULL DEFAULT 0,
            arrival INTEGER NOT NULL
        );
        CREATE INDEX held_message_pending ON held_message (aor, arrival) WHERE delivered_at IS NULL;
        CREATE INDEX held_message_expiry ON held_message (expires_at);
        """,
        // Version 2: a held message's devices, each delivered apart (a message held by version 1 has none: any
        // device's 2xx delivers it, as before). Its delivered_at is set once the last device has it.
        """
        CREATE TABLE held_delivery (
            message_id TEXT NOT NULL,
            device TEXT NOT NULL,
            position INTEGER NOT NULL,
            delivered_at INTEGER,
            PRIMARY KEY (message_id, device)
        ) WITHOUT ROWID;
        """,
        // Version 3: chat rooms (the server as a conference focus), their participants in order, and the final
        // answer of each participant device to the room's invitation.
        """
        CREATE TABLE chat_room (
            uri TEXT PRIMARY KEY NOT NULL,
            subject TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            version INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE chat_room_participant (
            room TEXT NOT NULL,
            aor TEXT NOT NULL,
            admin INTEGER NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (room, aor)
        ) WITHOUT ROWID;
        CREATE TABLE chat_room_device (
            room TEXT NOT NULL,
            aor TEXT NOT NULL,
            device TEXT NOT NULL,
            status INTEGER NOT NULL,
            PRIMARY KEY (room, aor, device)
        ) WITHOUT ROWID;
        """,
    ]

    let path: String
    private let database: Database

    /// Opens (creating) `directory/sip-server.db`. Files of the old layout in `directory` are imported in one
    /// transaction and then removed; unreadable ones are moved to `directory/unreadable/`.
    init(directory: String) throws(SIPServerError) {
        if FileSystem.exists(directory), !FileSystem.isDirectory(directory) {
            throw SIPServerError("\(directory) exists and is not a directory", code: .configuration)
        }
        do {
            try FileSystem.createDirectory(directory, mode: 0o700, parentMode: 0o700)
        } catch {
            throw SIPServerError("cannot create directory \(directory): \(error)")
        }
        path = Path.join(directory, Self.fileName)
        do {
            database = try Database(path: path, schema: Self.schema)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Opens the database in `directory` as `init(directory:)` does, importing files of the old
    /// one-file-per-message layout once, and logs what the import did.
    static func open(directory: String, logger: Logger) throws(SIPServerError) -> ServerDatabase {
        let database = try ServerDatabase(directory: directory)
        let migration = try database.importLegacyFiles(in: directory)
        if !migration.unreadable.isEmpty {
            logger.warning(
                "sip server moved unreadable held message files aside",
                metadata: [
                    "sip.files": "\(migration.unreadable.sorted().joined(separator: ","))",
                    "sip.folder": "\(Path.join(directory, ServerDatabase.unreadableFolder))",
                ])
        }
        if migration.imported > 0 {
            logger.info(
                "sip server imported held message files into its database",
                metadata: ["sip.count": "\(migration.imported)"])
        }
        return database
    }

    /// A database error as the server reports it; a damaged or newer file is a configuration problem (the operator
    /// must move it aside), anything else (full, read-only, busy) an I/O one.
    static func failure(_ error: DatabaseError) -> SIPServerError {
        switch error.code {
        case .corrupt, .newerSchema: return SIPServerError(error.message, code: .configuration)
        default: return SIPServerError(error.message, code: .io)
        }
    }

    // MARK: - held messages

    /// Every held message (delivered ones included, until they expire), oldest first.
    func heldMessages() throws(SIPServerError) -> [HeldMessage] {
        let rows: [SQLRow]
        let deliveryRows: [SQLRow]
        do {
            (rows, deliveryRows) = try database.read { tx throws(DatabaseError) in
                let rows = try tx.execute(
                    """
                    SELECT id, aor, call_id, headers, body, received_at, expires_at, delivered_at, attempts, arrival
                    FROM held_message ORDER BY arrival, id
                    """)
                let deliveries = try tx.execute(
                    "SELECT message_id, device, delivered_at FROM held_delivery ORDER BY message_id, position")
                return (rows, deliveries)
            }
        } catch {
            throw Self.failure(error)
        }
        var recipients: [String: [HeldMessage.Recipient]] = [:]
        for row in deliveryRows {
            guard let id = row.text(0), let device = row.text(1) else {
                throw SIPServerError(
                    "\(path): a held message's delivery row is damaged: move the file aside", code: .configuration)
            }
            recipients[id, default: []].append(
                HeldMessage.Recipient(device: device, delivery: row.integer(2).map { .delivered(at: $0) } ?? .pending))
        }
        var messages: [HeldMessage] = []
        for row in rows {
            guard let id = row.text(0), let aor = row.text(1), let callID = row.text(2),
                let headers = row.text(3).flatMap(HeldMessage.headers(fromJSON:)), let body = row.blob(4),
                let receivedAt = row.integer(5), let expiresAt = row.integer(6), let order = row.integer(9)
            else {
                throw SIPServerError(
                    "\(path): a held message row is damaged: move the file aside", code: .configuration)
            }
            messages.append(
                HeldMessage(
                    id: id, aor: aor, callID: callID, headers: headers, body: body,
                    receivedAt: receivedAt, expiresAt: expiresAt,
                    delivery: row.integer(7).map { .delivered(at: $0) } ?? .pending, recipients: recipients[id] ?? [],
                    attempts: Int(row.integer(8) ?? 0), order: order))
        }
        return messages
    }

    /// Stores a new held message; it counts as held only once this returns.
    func insert(_ message: HeldMessage) throws(SIPServerError) {
        do {
            try database.write { tx throws(DatabaseError) in try Self.insert(message, in: tx) }
        } catch {
            throw Self.failure(error)
        }
    }

    private static func insert(_ message: HeldMessage, in tx: borrowing Database.Transaction) throws(DatabaseError) {
        let deliveredAt: SQLValue
        switch message.delivery {
        case .pending: deliveredAt = .null
        case .delivered(let at): deliveredAt = .integer(at)
        }
        try tx.execute(
            """
            INSERT INTO held_message (id, aor, call_id, headers, body, received_at, expires_at, delivered_at, attempts, arrival)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
            """,
            [
                .text(message.id), .text(message.aor), .text(message.callID), .text(message.headersJSON),
                .blob(message.body), .integer(message.receivedAt), .integer(message.expiresAt), deliveredAt,
                .integer(Int64(message.attempts)), .integer(message.order),
            ])
        for (position, recipient) in message.recipients.enumerated() {
            let deliveredAt: SQLValue
            switch recipient.delivery {
            case .pending: deliveredAt = .null
            case .delivered(let at): deliveredAt = .integer(at)
            }
            try tx.execute(
                """
                INSERT INTO held_delivery (message_id, device, position, delivered_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (message_id, device) DO NOTHING
                """,
                [.text(message.id), .text(recipient.device), .integer(Int64(position)), deliveredAt])
        }
    }

    /// Marks a held message delivered to `device` (it answered 2xx), and as a whole when `complete` (the last of its
    /// devices, or nil `device`: a message without recipients), in one transaction. Crash-safe, not synced: a power
    /// loss could undo the mark and deliver the message to that device once more, which it recognizes; it can never
    /// lose the message.
    func markDelivered(id: String, device: String?, at time: Int64, complete: Bool) throws(SIPServerError) {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                if let device {
                    try tx.execute(
                        """
                        UPDATE held_delivery SET delivered_at = ?
                        WHERE message_id = ? AND device = ? AND delivered_at IS NULL
                        """,
                        [.integer(time), .text(id), .text(device)])
                }
                if complete {
                    try tx.execute(
                        "UPDATE held_message SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL",
                        [.integer(time), .text(id)])
                }
            }
        } catch {
            throw Self.failure(error)
        }
    }

    /// Hands a held message's pending copy for device `old` to device `heir` (a binding that replaced it).
    func reassign(id: String, from old: String, to heir: String) throws(SIPServerError) {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                try tx.execute(
                    """
                    UPDATE held_delivery SET device = ?
                    WHERE message_id = ? AND device = ? AND delivered_at IS NULL
                    """,
                    [.text(heir), .text(id), .text(old)])
            }
        } catch {
            throw Self.failure(error)
        }
    }

    /// Records how many deliveries of a held message were attempted (the next one's CSeq follows it).
    func recordAttempts(id: String, attempts: Int) throws(SIPServerError) {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                try tx.execute(
                    "UPDATE held_message SET attempts = ? WHERE id = ?", [.integer(Int64(attempts)), .text(id)])
            }
        } catch {
            throw Self.failure(error)
        }
    }

    // MARK: - chat rooms

    /// Every chat room, its participants in order and its devices' final answers (200: joined).
    func chatRooms() throws(SIPServerError) -> [ChatRoom] {
        let (rooms, participants, devices): ([SQLRow], [SQLRow], [SQLRow])
        do {
            (rooms, participants, devices) = try database.read { tx throws(DatabaseError) in
                (
                    try tx.execute("SELECT uri, subject, created_at, version FROM chat_room ORDER BY created_at, uri"),
                    try tx.execute("SELECT room, aor, admin FROM chat_room_participant ORDER BY room, position"),
                    try tx.execute("SELECT room, aor, device, status FROM chat_room_device")
                )
            }
        } catch {
            throw Self.failure(error)
        }
        let damaged = SIPServerError("\(path): a chat room row is damaged: move the file aside", code: .configuration)
        var byRoom: [String: [ChatRoom.Participant]] = [:]
        for row in participants {
            guard let room = row.text(0), let aor = row.text(1), let admin = row.integer(2) else { throw damaged }
            byRoom[room, default: []].append(ChatRoom.Participant(aor: aor, isAdmin: admin != 0))
        }
        for row in devices {
            guard let room = row.text(0), let aor = row.text(1), let device = row.text(2), let status = row.integer(3),
                let index = byRoom[room]?.firstIndex(where: { $0.aor == aor })
            else { throw damaged }
            byRoom[room]?[index].devices[device] =
                (200..<300).contains(status) ? .joined : .declined(status: Int(status))
        }
        var result: [ChatRoom] = []
        for row in rooms {
            guard let uri = row.text(0), let subject = row.text(1), let createdAt = row.integer(2),
                let version = row.integer(3)
            else { throw damaged }
            result.append(
                ChatRoom(
                    uri: uri, subject: subject, participants: byRoom[uri] ?? [], createdAt: createdAt,
                    version: Int(version)))
        }
        return result
    }

    /// Writes a chat room as it now stands (subject, participants, final answers), in one synced transaction: a
    /// room's creator and its admins hear 2xx only once it is stored.
    func saveChatRoom(_ room: ChatRoom) throws(SIPServerError) {
        do {
            try database.write { tx throws(DatabaseError) in
                try tx.execute(
                    """
                    INSERT INTO chat_room (uri, subject, created_at, version) VALUES (?, ?, ?, ?)
                    ON CONFLICT (uri) DO UPDATE SET subject = excluded.subject, version = excluded.version
                    """,
                    [.text(room.uri), .text(room.subject), .integer(room.createdAt), .integer(Int64(room.version))])
                try tx.execute("DELETE FROM chat_room_participant WHERE room = ?", [.text(room.uri)])
                try tx.execute("DELETE FROM chat_room_device WHERE room = ?", [.text(room.uri)])
                for (position, participant) in room.participants.enumerated() {
                    try tx.execute(
                        "INSERT INTO chat_room_participant (room, aor, admin, position) VALUES (?, ?, ?, ?)",
                        [
                            .text(room.uri), .text(participant.aor), .integer(participant.isAdmin ? 1 : 0),
                            .integer(Int64(position)),
                        ])
                    for (device, state) in participant.devices.sorted(by: { $0.key < $1.key }) {
                        let status: Int
                        switch state {
                        case .joined: status = 200
                        case .declined(let code): status = code
                        case .held, .inviting: continue
                        }
                        try tx.execute(
                            "INSERT INTO chat_room_device (room, aor, device, status) VALUES (?, ?, ?, ?)",
                            [.text(room.uri), .text(participant.aor), .text(device), .integer(Int64(status))])
                    }
                }
            }
        } catch {
            throw Self.failure(error)
        }
    }

    // MARK: - bindings

    /// Every binding that has not expired at `now` (Unix seconds), and the AORs whose bindings all expired
    /// meanwhile (still known: a MESSAGE for them gets 480, not 404); expired bindings are deleted.
    func liveBindings(now: Int64) throws(SIPServerError) -> (live: [StoredBinding], expiredAORs: [String]) {
        let rows: [SQLRow]
        let expired: [SQLRow]
        do {
            (rows, expired) = try database.write(.crashSafe) { tx throws(DatabaseError) in
                let expired = try tx.execute("DELETE FROM binding WHERE expires_at <= ? RETURNING aor", [.integer(now)])
                let rows = try tx.execute(
                    """
                    SELECT aor, key, contact, instance, expires, expires_at, transport, remote_host, remote_port, local_port
                    FROM binding ORDER BY aor, expires_at
                    """)
                return (rows, expired)
            }
        } catch {
            throw Self.failure(error)
        }
        var bindings: [StoredBinding] = []
        for row in rows {
            guard let aor = row.text(0), let key = row.text(1), let contact = row.text(2), let expires = row.integer(4),
                let expiresAt = row.integer(5), let transport = row.text(6).flatMap(SIPTransportKind.init(token:)),
                let remoteHost = row.text(7), let remotePort = row.integer(8), let localPort = row.integer(9)
            else {
                throw SIPServerError("\(path): a binding row is damaged: move the file aside", code: .configuration)
            }
            bindings.append(
                StoredBinding(
                    aor: aor, key: key, contact: contact, instance: row.text(3), expires: Int(expires),
                    expiresAt: expiresAt, transport: transport, remoteHost: remoteHost,
                    remotePort: Int(remotePort), localPort: Int(localPort)))
        }
        return (bindings, expired.compactMap { $0.text(0) })
    }

    /// Replaces the bindings of `aor` with `bindings` in one transaction (a REGISTER's outcome). Crash-safe, not
    /// synced: a binding is soft state (RFC 3261 §10: the device refreshes it before it expires), so a power loss that
    /// undoes one leaves messages for the device held and pushed until its next REGISTER, never lost; a restart of
    /// the server keeps it. The 200 to the REGISTER does not wait for the disk.
    func replaceBindings(aor: String, with bindings: [StoredBinding]) throws(SIPServerError) {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                try tx.execute("DELETE FROM binding WHERE aor = ?", [.text(aor)])
                for b in bindings {
                    try tx.execute(
                        """
                        INSERT INTO binding (aor, key, contact, instance, expires, expires_at, transport, remote_host,
                                             remote_port, local_port)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                        [
                            .text(b.aor), .text(b.key), .text(b.contact), .text(b.instance), .integer(Int64(b.expires)),
                            .integer(b.expiresAt), .text(b.transport.rawValue), .text(b.remoteHost),
                            .integer(Int64(b.remotePort)), .integer(Int64(b.localPort)),
                        ])
                }
            }
        } catch {
            throw Self.failure(error)
        }
    }

    // MARK: - expiry

    /// Deletes held messages and bindings that expired at `now` (Unix seconds), in one transaction.
    func deleteExpired(now: Int64) throws(SIPServerError) {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                try tx.execute(
                    "DELETE FROM held_delivery WHERE message_id IN (SELECT id FROM held_message WHERE expires_at <= ?)",
                    [.integer(now)])
                try tx.execute("DELETE FROM held_message WHERE expires_at <= ?", [.integer(now)])
                try tx.execute("DELETE FROM binding WHERE expires_at <= ?", [.integer(now)])
            }
        } catch {
            throw Self.failure(error)
        }
    }

    // MARK: - the old layout

    /// Imports the one-JSON-file-per-message files of `directory` (nse before its database): readable ones are
    /// inserted in one transaction and removed once it commits; unreadable ones are moved to `unreadable/`;
    /// temporary files of interrupted writes are removed (their rename never happened).
    func importLegacyFiles(in directory: String) throws(SIPServerError) -> Migration {
        var migration = Migration()
        let names: [String]
        do { names = try FileSystem.contents(ofDirectory: directory) } catch {
            throw SIPServerError("cannot read directory \(directory): \(error)")
        }
        for name in names where Self.isLegacyTemporary(name) {
            try? FileSystem.remove(Path.join(directory, name))
        }
        var messages: [HeldMessage] = []
        var imported: [String] = []
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            // `readFile` gives nil beyond the limit; `try?` folds that into a read failure.
            // A message whose header values hold control characters (kept by versions that did not refuse them)
            // would break the device that receives it: it is set aside like an unreadable file.
            if let bytes = try? FileSystem.readFile(Path.join(directory, name), limit: 4 << 20),
                let message = HeldMessage(legacyFile: bytes), SIPHeaders(message.headers).firstInvalidField == nil,
                !message.callID.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
            {
                messages.append(message)
                imported.append(name)
            } else {
                migration.unreadable.append(name)
            }
        }
        guard !messages.isEmpty || !migration.unreadable.isEmpty else { return migration }
        if !messages.isEmpty {
            do {
                try database.write { tx throws(DatabaseError) in
                    for message in messages { try Self.insert(message, in: tx) }
                }
            } catch {
                throw Self.failure(error)
            }
            for name in imported { try? FileSystem.remove(Path.join(directory, name)) }
            migration.imported = messages.count
        }
        if !migration.unreadable.isEmpty {
            let aside = Path.join(directory, Self.unreadableFolder)
            do {
                try FileSystem.createDirectory(aside, mode: 0o700, parentMode: 0o700)
            } catch {
                throw SIPServerError("cannot create directory \(aside): \(error)")
            }
            for name in migration.unreadable where rename(Path.join(directory, name), Path.join(aside, name)) != 0 {
                let reason = String(cString: strerror(errno))
                throw SIPServerError("cannot move \(Path.join(directory, name)) to \(aside): \(reason)")
            }
        }
        try? FileSystem.syncDirectory(directory)
        return migration
    }

    /// Temp files of interrupted writes: `ID.json.tmp.PID` (older versions: `.ID.json.tmp`).
    private static func isLegacyTemporary(_ name: String) -> Bool {
        if name.hasPrefix("."), name.hasSuffix(".json.tmp") { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[parts.count - 3] == "json", parts[parts.count - 2] == "tmp" else { return false }
        let pid = parts[parts.count - 1]
        return !pid.isEmpty && pid.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
