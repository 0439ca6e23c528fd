import CoreMetrics
import Logging
import NSESystem

/// The MESSAGEs kept for fork-late delivery, in memory and written through to the database (when there is one):
/// what is held, each delivery attempt, each delivery, and expiry.
///
/// A value owned by `SIPServer`'s actor; a database failure that loses nothing is logged here, one that would lose
/// a message is thrown to the server, which answers the sender 500.
struct HeldStore {
    private let database: ServerDatabase?
    private let logger: Logger
    /// Where the number of undelivered messages is shown.
    private let metrics: SIPServerMetrics
    private var messages: [String: HeldMessage] = [:]
    /// The undelivered messages' ids by AOR: a REGISTER looks up its own, not every message kept for the lifetime.
    private var undelivered: [String: Set<String>] = [:]
    /// The ids in `undelivered`, kept as it changes.
    private var undeliveredCount = 0 {
        didSet { metrics.heldMessages.set(undeliveredCount) }
    }
    /// The copies still owed to devices (a message for three devices, one of which has it, owes two).
    private var owedCount = 0 {
        didSet { metrics.heldDeliveries.set(owedCount) }
    }
    /// The last arrival order given out (orders stay strictly increasing, across restarts too).
    private var lastOrder: Int64 = 0

    init(database: ServerDatabase?, logger: Logger, metrics: SIPServerMetrics = SIPServerMetrics()) {
        self.database = database
        self.logger = logger
        self.metrics = metrics
    }

    /// Loads the held messages of the database (after a restart); returns them.
    mutating func load() throws(SIPServerError) -> [HeldMessage] {
        guard let database else { return [] }
        let loaded = try database.heldMessages()
        for message in loaded {
            messages[message.id] = message
            if !message.isDelivered { index(message) }
            lastOrder = max(lastOrder, message.order)
        }
        if !loaded.isEmpty {
            logger.info(
                "sip server loaded held messages",
                metadata: [
                    "sip.count": "\(loaded.count)", "sip.undelivered": "\(loaded.filter { !$0.isDelivered }.count)",
                    "sip.owed": "\(owedCount)",
                ])
        }
        return loaded
    }

    /// The next arrival order (wall-clock nanoseconds, bumped to stay strictly increasing).
    mutating func nextOrder() -> Int64 {
        lastOrder = max(lastOrder + 1, SystemClock.unixNanoseconds())
        return lastOrder
    }

    subscript(id: String) -> HeldMessage? { messages[id] }

    /// Keeps a message; it counts as held only once it is stored.
    mutating func hold(_ record: HeldMessage) throws(SIPServerError) {
        try database?.insert(record)
        messages[record.id] = record
        if !record.isDelivered { index(record) }
    }

    /// Puts a message in the undelivered index.
    private mutating func index(_ message: HeldMessage) {
        if undelivered[message.aor, default: []].insert(message.id).inserted {
            undeliveredCount += 1
            owedCount += Self.owed(message)
        }
    }

    /// The copies a message still owes: one per pending recipient, or one for a message without recipients.
    private static func owed(_ message: HeldMessage) -> Int {
        if message.isDelivered { return 0 }
        return message.recipients.isEmpty ? 1 : message.pendingDevices.count
    }

    /// Undelivered messages that have not expired, oldest first, of one AOR or of all; with `device`, only those
    /// that device is still to get (a device registered after a message arrived never gets it).
    func waiting(aor: String?, device: String? = nil, now: Int64? = nil) -> [HeldMessage] {
        let candidates: [HeldMessage]
        if let aor {
            candidates = (undelivered[aor] ?? []).compactMap { messages[$0] }
        } else {
            candidates = Array(messages.values)
        }
        return candidates.filter { message in
            !message.isDelivered && (device.map { message.awaits(device: $0) } ?? true)
                && (now.map { message.expiresAt > $0 } ?? true)
        }.sorted { $0.order < $1.order }
    }

    /// Counts one more delivery attempt of a held message and returns its number (the CSeq of the copy sent), or
    /// nil when `id` is not held.
    mutating func recordAttempt(id: String) -> Int? {
        guard var message = messages[id] else { return nil }
        message.attempts += 1
        messages[id] = message
        do {
            try database?.recordAttempts(id: id, attempts: message.attempts)
        } catch {
            // Only the next CSeq after a restart depends on it: deliver anyway.
            logger.warning(
                "sip server cannot store a delivery attempt",
                metadata: ["sip.call_id": "\(message.callID)", "sip.error": "\(error)"])
        }
        return message.attempts
    }

    /// Records a device's 2xx to a held message (nil `device`: the message as a whole); returns the message as it
    /// now stands, or nil when that device was not waiting for it (it had it already: never counted twice).
    mutating func markDelivered(id: String, device: String? = nil) -> HeldMessage? {
        guard var message = messages[id] else { return nil }
        let before = Self.owed(message)
        let deliveredAt = SystemClock.unixSeconds()
        guard message.markDelivered(device: device, at: deliveredAt) else { return nil }
        do {
            try database?.markDelivered(
                id: id, device: message.recipients.isEmpty ? nil : device, at: deliveredAt,
                complete: message.isDelivered)
        } catch {
            // The device has it: after a restart it may get it once more (never lost, at worst twice).
            logger.error(
                "sip server cannot persist delivery",
                metadata: ["sip.call_id": "\(message.callID)", "sip.error": "\(error)"])
        }
        messages[id] = message
        if message.isDelivered {
            owedCount -= before
            forget(message)
        } else {
            owedCount -= before - Self.owed(message)
        }
        return message
    }

    /// Hands what `old` (a binding the registrar replaced) is still owed to `heir`, the binding that replaced it:
    /// the same phone's app under another `+sip.instance` (a reinstall that kept its push token). Returns the number
    /// of messages handed over; one `heir` already waits for is left as it is.
    mutating func reassign(aor: String, from old: String, to heir: String) -> Int {
        var moved = 0
        for id in undelivered[aor] ?? [] {
            guard var message = messages[id], !message.recipients.contains(where: { $0.device == heir }),
                let index = message.recipients.firstIndex(where: { $0.device == old && $0.delivery == .pending })
            else { continue }
            message.recipients[index].device = heir
            do {
                try database?.reassign(id: id, from: old, to: heir)
            } catch {
                // In memory the new binding has it; after a restart the phone gets it when its old binding returns.
                logger.warning(
                    "sip server cannot store a held message handed to a new binding",
                    metadata: ["sip.call_id": "\(message.callID)", "sip.error": "\(error)"])
            }
            messages[id] = message
            moved += 1
        }
        return moved
    }

    /// Takes a message out of the undelivered index.
    private mutating func forget(_ message: HeldMessage) {
        guard var ids = undelivered[message.aor] else { return }
        if ids.remove(message.id) != nil {
            undeliveredCount -= 1
            owedCount -= Self.owed(message)
        }
        undelivered[message.aor] = ids.isEmpty ? nil : ids
    }

    /// Drops the messages whose lifetime is over (and the database's expired records); returns those that expired
    /// undelivered. The sweeper's part.
    mutating func sweep(now: Int64) -> [HeldMessage] {
        do {
            try database?.deleteExpired(now: now)
        } catch {
            // Dropped from memory below all the same; the next sweep that can write deletes them from the file.
            logger.warning("sip server cannot delete expired records", metadata: ["sip.error": "\(error)"])
        }
        var expired: [HeldMessage] = []
        for (id, message) in messages where message.expiresAt <= now {
            messages[id] = nil
            if !message.isDelivered {
                expired.append(message)
                forget(message)
            }
        }
        return expired
    }
}
