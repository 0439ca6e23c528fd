import NSEDatabase
public import NSEJSON
public import NSESystem

/// The chat rooms the app has joined (in the App Group store, `app-group.db`), as liblinphone keeps its chat rooms in
/// its shared database: the room's address, its subject and participants as the room's conference state last said
/// them. The extension that joins a room on its invitation writes it; a later push for a message in that room reads
/// its subject for the notification's title.
public struct RoomStore: Sendable {
    let database: Database

    /// One room as the app knows it.
    public struct Room: Sendable, Equatable {
        /// The room's address (`sip:chatroom-…@host`), as the server's conference focus names it.
        public var address: String
        public var subject: String
        /// The participants' addresses, in the order the room's state listed them.
        public var participants: [String]
        /// When the app joined (Unix milliseconds).
        public var joinedAt: Int64
        /// When its state was last read (Unix milliseconds).
        public var updatedAt: Int64

        public init(address: String, subject: String, participants: [String], joinedAt: Int64, updatedAt: Int64) {
            self.address = address
            self.subject = subject
            self.participants = participants
            self.joinedAt = joinedAt
            self.updatedAt = updatedAt
        }

        /// `{"address", "subject", "participants", "joined_at", "updated_at"}`.
        public var json: JSON {
            [
                "address": .string(address), "subject": .string(subject),
                "participants": .array(participants.map(JSON.string)), "joined_at": .int(joinedAt),
                "updated_at": .int(updatedAt),
            ]
        }
    }

    /// Keeps a room's state: a new room is joined now, a known one keeps when it was joined.
    public func keep(
        address: String, subject: String, participants: [String], now: Int64 = SystemClock.unixMilliseconds()
    ) throws(DeviceError) {
        let list = JSON.array(participants.map(JSON.string)).serialized()
        do {
            try database.write { tx throws(DatabaseError) in
                try tx.execute(
                    """
                    INSERT INTO rooms (address, subject, participants, joined_at, updated_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (address) DO UPDATE SET subject = excluded.subject,
                        participants = excluded.participants, updated_at = excluded.updated_at
                    """, [.text(Self.key(address)), .text(subject), .text(list), .integer(now), .integer(now)])
            }
        } catch {
            throw error.deviceError
        }
    }

    /// The room at `address`, if the app has joined it.
    public func room(_ address: String) throws(DeviceError) -> Room? {
        do {
            return try database.execute(
                "SELECT address, subject, participants, joined_at, updated_at FROM rooms WHERE address = ?",
                [.text(Self.key(address))]
            ).first.map(Self.room(from:))
        } catch {
            throw error.deviceError
        }
    }

    /// Every room, the most recently joined first (`nse device show`).
    public func all() throws(DeviceError) -> [Room] {
        do {
            return try database.execute(
                "SELECT address, subject, participants, joined_at, updated_at FROM rooms ORDER BY joined_at DESC"
            ).map(Self.room(from:))
        } catch {
            throw error.deviceError
        }
    }

    private static func room(from row: SQLRow) -> Room {
        let participants =
            (try? JSON.parse(row.text(2) ?? "[]", options: JSONParseOptions(requireObject: false)))?.arrayValue?
            .compactMap(\.stringValue) ?? []
        return Room(
            address: row.text(0) ?? "", subject: row.text(1) ?? "", participants: participants,
            joinedAt: row.integer(3) ?? 0, updatedAt: row.integer(4) ?? 0)
    }

    /// The key a room is kept under: its address without angle brackets, parameters or surrounding space, the scheme
    /// and host in lower case, so that the invitation's `chat-room-addr` and a message's `From` find the same room.
    public static func key(_ address: String) -> String {
        var text = Substring(address.trimmingCharacters(in: " \t"))
        if let open = text.firstIndex(of: "<"), let close = text[open...].firstIndex(of: ">") {
            text = text[text.index(after: open)..<close]
        }
        if let semicolon = text.firstIndex(of: ";") { text = text[..<semicolon] }
        guard let at = text.lastIndex(of: "@") else { return text.lowercased() }
        return String(text[..<at]).lowercasedScheme + text[at...].lowercased()
    }
}

extension String {
    /// `SIP:alice` → `sip:alice`: the scheme in lower case, the user part as it is (it is case-sensitive).
    fileprivate var lowercasedScheme: String {
        guard let colon = firstIndex(of: ":") else { return self }
        return self[..<colon].lowercased() + self[colon...]
    }

    /// Without the leading and trailing ASCII characters of `set`, by bytes: by `Character`s (grapheme breaking,
    /// twice reversed) it was about 1 % of a warm push's CPU in the extension, which looks a room up for every message.
    fileprivate func trimmingCharacters(in set: StaticString) -> String {
        let bytes = utf8
        let trimmed = UnsafeBufferPointer(start: set.utf8Start, count: set.utf8CodeUnitCount)
        guard let first = bytes.firstIndex(where: { !trimmed.contains($0) }) else { return "" }
        let last = bytes.lastIndex(where: { !trimmed.contains($0) }) ?? first
        return String(self[first...last])
    }
}
