import NSECrypto
import NSEDatabase
import NSEJSON
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

    /// The form older nse versions kept in `store/*.json` (read once, by the import).
    init?(json: JSON) {
        guard let callID = json["call_id"]?.stringValue, let body = json["body"]?.stringValue.flatMap(Base64.decode),
            let receivedAt = json["received_at"]?.intValue
        else { return nil }
        self.init(
            callID: callID, from: json["from"]?.stringValue ?? "", to: json["to"]?.stringValue ?? "",
            contentType: json["content_type"]?.stringValue ?? "", body: body, receivedAt: receivedAt)
    }
}

/// The messages of the App Group store. A message is *held* until a push names its Call-ID; then one extension
/// process *claims* it (``take(callID:now:)``: of any number asking at once, exactly one gets it), hands its content
/// to the host, and marks it *shown* (``markShown(callID:now:)``); a shown message is remembered without its body for a
/// day, so a copy that another extension process received in the same flush is not kept and shown again. A claim
/// whose process died before marking it (killed by the host or a signal) goes back to held at the next purge: the
/// message stays in the store rather than being lost. A held message that no push names within 5 minutes (as
/// liblinphone's wait) is no longer handed to a push but kept, body and all, as *unnotified*: the device answered 200
/// for it, so it is the app's to show in its history (liblinphone keeps it in its chat database). Unnotified and
/// shown messages are forgotten after a day.
public struct MessageStore: Sendable {
    /// What ``keep(_:now:)`` did.
    public enum Kept: Sendable, Equatable {
        /// Stored for a later push.
        case kept
        /// Already held (a retransmission or a copy from another flush).
        case duplicate
        /// Already shown by a notification: not kept again.
        case alreadyShown
    }

    /// The states a row has (the `state` column).
    enum State: String {
        case held, claimed, shown, unnotified
    }

    let database: Database
    /// How long a held message is kept, in milliseconds.
    public var lifetimeMilliseconds: Int64 = 5 * 60 * 1000
    /// How long a shown message's Call-ID is remembered.
    public var shownMemoryMilliseconds: Int64 = 24 * 3600 * 1000
    /// How long a claim lasts when its process cannot be checked: longer than any extension's budget and the host's
    /// grace before it kills one.
    public var claimMilliseconds: Int64 = 2 * 60 * 1000

    init(database: Database) { self.database = database }

    /// Who shows a kept message, which says how durable keeping it must be.
    public enum Showing: Sendable {
        /// A later push: once kept, the message is this device's alone (its sender had the 200), so it is synced to
        /// disk before `keep` returns.
        case later
        /// This process, in a moment: kept only against the process dying before it shows it, which a crash-safe
        /// write survives. A power loss in that moment would take the notification with it anyway.
        case now
    }

    /// Keeps a message. Once this returns, the message is stored (for a later push: durably, and the extension may
    /// then answer 200 to its sender); when it throws, nothing was stored.
    @discardableResult
    public func keep(
        _ message: StoredMessage, shown: Showing = .later, now: Int64 = Clock.unixMilliseconds()
    ) throws(DeviceError) -> Kept {
        do {
            return try database.write(shown == .later ? .durable : .crashSafe) { tx throws(DatabaseError) -> Kept in
                try tx.execute(
                    """
                    INSERT INTO messages (call_id, sender, recipient, content_type, body, received_at, state)
                    VALUES (?, ?, ?, ?, ?, ?, 'held') ON CONFLICT (call_id) DO NOTHING
                    """,
                    [
                        .text(message.callID), .text(message.from), .text(message.to), .text(message.contentType),
                        .blob(message.body), .integer(message.receivedAt),
                    ])
                if tx.changes == 1 { return .kept }
                let state = try tx.execute("SELECT state FROM messages WHERE call_id = ?", [.text(message.callID)])
                    .first?.text(0)
                return state == State.shown.rawValue ? .alreadyShown : .duplicate
            }
        } catch {
            throw error.deviceError
        }
    }

    /// Claims the held message with this Call-ID for this process, if it is there and fresh: of any number of
    /// processes asking at once, exactly one gets it. The claimer marks it shown (``markShown(callID:now:)``) once
    /// the host has its content; if the claimer dies first, the message goes back to held. Crash-safe, not synced.
    public func take(
        callID: String, now: Int64 = Clock.unixMilliseconds(), claimer: Int32 = Processes.current
    ) throws(DeviceError) -> StoredMessage? {
        do {
            return try database.write(.crashSafe) { tx throws(DatabaseError) -> StoredMessage? in
                let rows = try tx.execute(
                    """
                    SELECT sender, recipient, content_type, body, received_at FROM messages
                    WHERE call_id = ? AND state = 'held' AND received_at >= ?
                    """, [.text(callID), .integer(now - lifetimeMilliseconds)])
                guard let row = rows.first else { return nil }
                try tx.execute(
                    "UPDATE messages SET state = 'claimed', claimed_at = ?, claimed_by = ? WHERE call_id = ?",
                    [.integer(now), .integer(Int64(claimer)), .text(callID)])
                return StoredMessage(
                    callID: callID, from: row.text(0) ?? "", to: row.text(1) ?? "", contentType: row.text(2) ?? "",
                    body: row.blob(3) ?? [], receivedAt: row.integer(4) ?? now)
            }
        } catch {
            throw error.deviceError
        }
    }

    /// Who showed a message.
    public enum Viewer: String, Sendable, Equatable {
        /// A notification, rewritten by the extension.
        case notification = "extension"
        /// The main app, in the foreground (`nse app`).
        case app
    }

    /// Records that a notification (or the app in the foreground) showed the message with this Call-ID (claimed from
    /// the store, or received from the network): its body is dropped, and copies that arrive later are not kept.
    /// Crash-safe, not synced: what a power loss could undo is a mark whose loss shows the message once more, never
    /// a message.
    public func markShown(callID: String, by viewer: Viewer = .notification, now: Int64 = Clock.unixMilliseconds())
        throws(DeviceError)
    {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                try tx.execute(
                    """
                    INSERT INTO messages (call_id, sender, recipient, content_type, body, received_at, state, shown_at,
                        shown_by)
                    VALUES (?, '', '', '', x'', ?, 'shown', ?, ?)
                    ON CONFLICT (call_id) DO UPDATE SET state = 'shown', shown_at = excluded.shown_at, body = x'',
                        claimed_at = NULL, claimed_by = NULL, shown_by = excluded.shown_by
                    """, [.text(callID), .integer(now), .integer(now), .text(viewer.rawValue)])
            }
        } catch {
            throw error.deviceError
        }
    }

    /// Who showed the message with this Call-ID (within the last day), if anyone did.
    public func shownBy(callID: String, now: Int64 = Clock.unixMilliseconds()) throws(DeviceError) -> Viewer? {
        do {
            let rows = try database.execute(
                "SELECT shown_by FROM messages WHERE call_id = ? AND state = 'shown' AND shown_at >= ?",
                [.text(callID), .integer(now - shownMemoryMilliseconds)])
            guard let row = rows.first else { return nil }
            return row.text(0).flatMap(Viewer.init(rawValue:)) ?? .notification
        } catch {
            throw error.deviceError
        }
    }

    /// Whether a fresh message with this Call-ID is held.
    public func contains(callID: String, now: Int64 = Clock.unixMilliseconds()) throws(DeviceError) -> Bool {
        do {
            return try !database.execute(
                "SELECT 1 FROM messages WHERE call_id = ? AND state = 'held' AND received_at >= ?",
                [.text(callID), .integer(now - lifetimeMilliseconds)]
            ).isEmpty
        } catch {
            throw error.deviceError
        }
    }

    /// Messages no push named in time, kept for the app, oldest first.
    public func unnotified() throws(DeviceError) -> [StoredMessage] {
        try messages(in: .unnotified, receivedSince: .min)
    }

    /// Every fresh held message, oldest first.
    public func held(now: Int64 = Clock.unixMilliseconds()) throws(DeviceError) -> [StoredMessage] {
        try messages(in: .held, receivedSince: now - lifetimeMilliseconds)
    }

    /// The messages in `state` received at or after `receivedSince`, oldest first, bodies included.
    private func messages(in state: State, receivedSince: Int64) throws(DeviceError) -> [StoredMessage] {
        do {
            return try database.execute(
                """
                SELECT call_id, sender, recipient, content_type, body, received_at FROM messages
                WHERE state = ? AND received_at >= ? ORDER BY received_at, call_id
                """, [.text(state.rawValue), .integer(receivedSince)]
            ).map { row in
                StoredMessage(
                    callID: row.text(0) ?? "", from: row.text(1) ?? "", to: row.text(2) ?? "",
                    contentType: row.text(3) ?? "", body: row.blob(4) ?? [], receivedAt: row.integer(5) ?? 0)
            }
        } catch {
            throw error.deviceError
        }
    }

    /// Gives back the claims of processes that died before showing their message, turns expired held messages into
    /// unnotified ones, and forgets shown and unnotified ones after a day; returns how many rows went. Crash-safe,
    /// not synced.
    @discardableResult
    public func purge(now: Int64 = Clock.unixMilliseconds()) throws(DeviceError) -> Int {
        do {
            return try database.write(.crashSafe) { tx throws(DatabaseError) -> Int in
                let claims = try tx.execute(
                    "SELECT call_id, claimed_at, claimed_by FROM messages WHERE state = 'claimed'")
                for row in claims {
                    let claimedAt = row.integer(1) ?? 0
                    let claimer = Int32(truncatingIfNeeded: row.integer(2) ?? 0)
                    guard claimedAt < now - claimMilliseconds || !Processes.isRunning(claimer) else { continue }
                    try tx.execute(
                        """
                        UPDATE messages SET state = 'held', claimed_at = NULL, claimed_by = NULL
                        WHERE call_id = ? AND state = 'claimed'
                        """, [.text(row.text(0))])
                }
                try tx.execute(
                    "UPDATE messages SET state = 'unnotified' WHERE state = 'held' AND received_at < ?",
                    [.integer(now - lifetimeMilliseconds)])
                try tx.execute(
                    """
                    DELETE FROM messages WHERE (state = 'shown' AND shown_at < ?)
                        OR (state = 'unnotified' AND received_at < ?)
                    """,
                    [.integer(now - shownMemoryMilliseconds), .integer(now - shownMemoryMilliseconds)])
                return tx.changes
            }
        } catch {
            throw error.deviceError
        }
    }
}
