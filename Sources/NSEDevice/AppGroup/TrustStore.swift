import NSEDatabase
public import NSESystem

/// The senders a device trusts, and the signed messages it has shown (in the App Group store, `app-group.db`): the
/// contacts' Ed25519 public keys (`nse device trust`), several per contact while a key is being rotated, and each
/// signed message's id for a day, so that an envelope replayed is not shown twice.
public struct TrustStore: Sendable {
    let database: Database
    /// How long a signed message's id is remembered.
    public static let seenMemoryMilliseconds: Int64 = 24 * 3600 * 1000

    /// Trusts `key` (base64) for `contact`; `replacing` first forgets the contact's other keys (a rotation done).
    public func trust(
        _ key: String, for contact: String, replacing: Bool = false, now: Int64 = SystemClock.unixMilliseconds()
    )
        throws(DeviceError)
    {
        do {
            try database.write { tx throws(DatabaseError) in
                if replacing { try tx.execute("DELETE FROM trusted_keys WHERE contact = ?", [.text(contact)]) }
                try tx.execute(
                    "INSERT OR IGNORE INTO trusted_keys (contact, public_key, added_at) VALUES (?, ?, ?)",
                    [.text(contact), .text(key), .integer(now)])
            }
        } catch {
            throw error.deviceError
        }
    }

    /// The keys trusted for `contact`.
    public func keys(for contact: String) throws(DeviceError) -> [String] {
        do {
            return try database.execute(
                "SELECT public_key FROM trusted_keys WHERE contact = ? ORDER BY added_at", [.text(contact)]
            ).compactMap { $0.text(0) }
        } catch {
            throw error.deviceError
        }
    }

    /// The contacts `key` is trusted for.
    public func contacts(trusting key: String) throws(DeviceError) -> [String] {
        do {
            return try database.execute(
                "SELECT contact FROM trusted_keys WHERE public_key = ? ORDER BY contact", [.text(key)]
            ).compactMap { $0.text(0) }
        } catch {
            throw error.deviceError
        }
    }

    /// Every trusted contact and its keys, for `nse device show`.
    public func all() throws(DeviceError) -> [(contact: String, key: String)] {
        do {
            return try database.execute("SELECT contact, public_key FROM trusted_keys ORDER BY contact, added_at")
                .map { ($0.text(0) ?? "", $0.text(1) ?? "") }
        } catch {
            throw error.deviceError
        }
    }

    /// Records a signed message as seen; `false` when it was seen already (within a day): a replay.
    public func firstSighting(of messageID: String, now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError)
        -> Bool
    {
        do {
            return try database.write(.crashSafe) { tx throws(DatabaseError) -> Bool in
                try tx.execute(
                    "DELETE FROM seen_messages WHERE seen_at < ?", [.integer(now - Self.seenMemoryMilliseconds)])
                try tx.execute(
                    "INSERT OR IGNORE INTO seen_messages (message_id, seen_at) VALUES (?, ?)",
                    [.text(messageID), .integer(now)])
                return tx.changes == 1
            }
        } catch {
            throw error.deviceError
        }
    }
}
