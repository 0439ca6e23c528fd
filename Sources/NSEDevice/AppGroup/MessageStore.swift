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
/// process *claims* it (``claim(callID:now:claimer:)``: of any number asking at once, exactly one gets it), hands its content
/// to the host, and marks it *shown* (``markShown(callID:by:now:)``); a shown message is remembered without its body for a
/// day, so a copy that another extension process received in the same flush is not kept and shown again. A claim
/// whose process died before marking it (killed by the host or a signal) goes back to held at the next purge: the
/// message stays in the store rather than being lost. A held message that no push names within 5 minutes (as
/// liblinphone's wait) is no longer handed to a push but kept, body and all, as *unnotified*: the device answered 200
/// for it, so it is the app's to show in its history (liblinphone keeps it in its chat database). Unnotified and
/// shown messages are forgotten after a day.
public struct MessageStore: Sendable {
    /// What ``keep(_:shown:now:)`` did.
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
        _ message: StoredMessage, shown: Showing = .later, now: Int64 = SystemClock.unixMilliseconds()
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

    /// Who shows the message with a Call-ID, as one transaction decided it.
    public enum Claim: Sendable, Equatable {
        /// This process: it has the message and shows it.
        case claimed(StoredMessage)
        /// Another extension process that is alive has claimed it and is showing it now.
        case claimedElsewhere
        /// It was shown (within the last day).
        case shown(Viewer)
        /// The store has no message to show for it.
        case absent
    }

    /// Claims the held message with this Call-ID for this process, if it is there and fresh: of any number of
    /// processes asking at once, exactly one gets it, and the others learn in the same transaction who shows it.
    /// The claimer marks it shown (``markShown(callID:by:now:)``) once the host has its content; if the claimer dies
    /// first, the message goes back to held. Crash-safe, not synced.
    public func claim(
        callID: String, now: Int64 = SystemClock.unixMilliseconds(), claimer: Int32 = Processes.current
    ) throws(DeviceError) -> Claim {
        do {
            // Most fetches find nothing under their Call-ID (the message comes from the network): a read says so
            // without taking the write lock every other process of the container would wait for.
            let kept = try database.read { tx throws(DatabaseError) in
                try !tx.execute("SELECT 1 FROM messages WHERE call_id = ?", [.text(callID)]).isEmpty
            }
            guard kept else { return .absent }
            return try database.write(.crashSafe) { tx throws(DatabaseError) -> Claim in
                let rows = try tx.execute(
                    """
                    SELECT state, sender, recipient, content_type, body, received_at, claimed_at, claimed_by, shown_at,
                        shown_by
                    FROM messages WHERE call_id = ?
                    """, [.text(callID)])
                guard let row = rows.first else { return .absent }
                let message = StoredMessage(
                    callID: callID, from: row.text(1) ?? "", to: row.text(2) ?? "", contentType: row.text(3) ?? "",
                    body: row.blob(4) ?? [], receivedAt: row.integer(5) ?? now)
                switch State(rawValue: row.text(0) ?? "") {
                case .held? where message.receivedAt >= now - lifetimeMilliseconds:
                    break
                case .claimed?:
                    // Another live process is showing it. A claim whose process is gone is the purge's to give back
                    // (`purge(now:)`, which a fetch runs first); this process's own is not taken twice.
                    let claimedBy = Int32(truncatingIfNeeded: row.integer(7) ?? 0)
                    let gone = claimGone(claimedAt: row.integer(6) ?? 0, by: claimedBy, now: now)
                    return claimedBy != claimer && !gone ? .claimedElsewhere : .absent
                case .shown? where (row.integer(8) ?? 0) >= now - shownMemoryMilliseconds:
                    return .shown(row.text(9).flatMap(Viewer.init(rawValue:)) ?? .notification)
                default:
                    return .absent
                }
                try tx.execute(
                    "UPDATE messages SET state = 'claimed', claimed_at = ?, claimed_by = ? WHERE call_id = ?",
                    [.integer(now), .integer(Int64(claimer)), .text(callID)])
                return .claimed(message)
            }
        } catch {
            throw error.deviceError
        }
    }

    /// ``claim(callID:now:claimer:)``'s message when this process got it.
    public func take(
        callID: String, now: Int64 = SystemClock.unixMilliseconds(), claimer: Int32 = Processes.current
    ) throws(DeviceError) -> StoredMessage? {
        guard case .claimed(let message) = try claim(callID: callID, now: now, claimer: claimer) else { return nil }
        return message
    }

    /// Claims a message that has just arrived from the network for this process to show: it is kept (claimed, so
    /// a kill before it is shown leaves it held for the next push) unless another process already has it. Two
    /// processes woken for the same message (the server pushed twice) both receive it; this transaction decides
    /// which one shows it. Crash-safe, not synced: the copy guards against this process dying, and the 200 does not
    /// wait for the disk.
    public func claimArrived(
        _ message: StoredMessage, now: Int64 = SystemClock.unixMilliseconds(), claimer: Int32 = Processes.current
    ) throws(DeviceError) -> Claim {
        do {
            let inserted = try database.write(.crashSafe) { tx throws(DatabaseError) -> Bool in
                try tx.execute(
                    """
                    INSERT INTO messages (call_id, sender, recipient, content_type, body, received_at, state,
                        claimed_at, claimed_by)
                    VALUES (?, ?, ?, ?, ?, ?, 'claimed', ?, ?) ON CONFLICT (call_id) DO NOTHING
                    """,
                    [
                        .text(message.callID), .text(message.from), .text(message.to), .text(message.contentType),
                        .blob(message.body), .integer(message.receivedAt), .integer(now), .integer(Int64(claimer)),
                    ])
                return tx.changes == 1
            }
            if inserted { return .claimed(message) }
        } catch {
            throw error.deviceError
        }
        // Kept before (held by an earlier flush, or claimed or shown by another process): the usual claim decides,
        // and a copy that was held but had grown old is this process's to show all the same.
        switch try claim(callID: message.callID, now: now, claimer: claimer) {
        case .claimed(let stored): return .claimed(stored)
        case .absent: return try reclaimStale(message, now: now, claimer: claimer)
        case let other: return other
        }
    }

    /// A row this message's Call-ID had that no push may take (held too long, unnotified, a claim whose process is
    /// gone): claimed for this process, which received the message itself.
    private func reclaimStale(_ message: StoredMessage, now: Int64, claimer: Int32) throws(DeviceError) -> Claim {
        do {
            try database.write(.crashSafe) { tx throws(DatabaseError) in
                try tx.execute(
                    """
                    UPDATE messages SET state = 'claimed', claimed_at = ?, claimed_by = ?
                    WHERE call_id = ? AND state != 'shown'
                    """, [.integer(now), .integer(Int64(claimer)), .text(message.callID)])
            }
            return .claimed(message)
        } catch {
            throw error.deviceError
        }
    }

    /// Whether a claim no longer stands: its process is gone, or it is older than any extension lives.
    private func claimGone(claimedAt: Int64, by claimer: Int32, now: Int64) -> Bool {
        claimedAt < now - claimMilliseconds || !Processes.isRunning(claimer)
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
    public func markShown(
        callID: String, by viewer: Viewer = .notification, now: Int64 = SystemClock.unixMilliseconds()
    )
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
    public func shownBy(callID: String, now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> Viewer? {
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
    public func contains(callID: String, now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> Bool {
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
    public func held(now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> [StoredMessage] {
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

    /// The Call-IDs of claims whose process is gone (or that are older than any extension lives).
    private func goneClaims(_ tx: borrowing Database.Transaction, now: Int64) throws(DatabaseError) -> [String] {
        try tx.execute("SELECT call_id, claimed_at, claimed_by FROM messages WHERE state = 'claimed'").compactMap {
            row in
            let claimer = Int32(truncatingIfNeeded: row.integer(2) ?? 0)
            return claimGone(claimedAt: row.integer(1) ?? 0, by: claimer, now: now) ? row.text(0) : nil
        }
    }

    /// What else the purge takes, by the same conditions in its check and its writes: held messages past their
    /// lifetime (bound: the oldest time kept), shown and unnotified ones past the day they are remembered (bound twice:
    /// the oldest time remembered).
    private static let expiredHeld = "state = 'held' AND received_at < ?"
    private static let forgotten = "(state = 'shown' AND shown_at < ?) OR (state = 'unnotified' AND received_at < ?)"
    private static let purgeDueSQL = """
        SELECT 1 WHERE EXISTS (SELECT 1 FROM messages WHERE \(expiredHeld))
            OR EXISTS (SELECT 1 FROM messages WHERE \(forgotten))
        """
    private static let expireHeldSQL = "UPDATE messages SET state = 'unnotified' WHERE \(expiredHeld)"
    private static let forgetSQL = "DELETE FROM messages WHERE \(forgotten)"

    /// Gives back the claims of processes that died before showing their message, turns expired held messages into
    /// unnotified ones, and forgets shown and unnotified ones after a day; returns how many rows went. Crash-safe,
    /// not synced.
    @discardableResult
    public func purge(now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> Int {
        let (kept, remembered) = (now - lifetimeMilliseconds, now - shownMemoryMilliseconds)
        do {
            // Most fetches find nothing to purge: a read says so without taking the write lock that every other
            // process of the container would wait for.
            let due = try database.read { tx throws(DatabaseError) in
                if try !goneClaims(tx, now: now).isEmpty { return true }
                return try !tx.execute(Self.purgeDueSQL, [.integer(kept), .integer(remembered), .integer(remembered)])
                    .isEmpty
            }
            guard due else { return 0 }
            return try database.write(.crashSafe) { tx throws(DatabaseError) -> Int in
                for callID in try goneClaims(tx, now: now) {
                    try tx.execute(
                        """
                        UPDATE messages SET state = 'held', claimed_at = NULL, claimed_by = NULL
                        WHERE call_id = ? AND state = 'claimed'
                        """, [.text(callID)])
                }
                try tx.execute(Self.expireHeldSQL, [.integer(kept)])
                try tx.execute(Self.forgetSQL, [.integer(remembered), .integer(remembered)])
                return tx.changes
            }
        } catch {
            throw error.deviceError
        }
    }
}
