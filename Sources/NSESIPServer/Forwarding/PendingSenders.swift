import NSESIP

/// The senders of MESSAGEs still owed their one final answer: 2xx once a device takes the message, 202 when it is
/// held at the accept timeout, or the failure when every live copy failed and nothing was held.
///
/// A value owned by `SIPServer`'s actor; each sender's accept timer runs as a child task of the server that
/// `take` calls off.
struct PendingSenders {
    /// Where a sender's MESSAGE stands.
    enum Custody {
        /// Only forwarded to live bindings: if every copy fails, the sender hears the failure.
        case forwarded
        /// Stored for fork-late delivery: the sender hears 2xx from a device, or 202 at the accept timeout.
        case held
    }

    struct Sender {
        var request: SIPRequest
        var flow: ServerFlow
        var transactionKey: String
        var record: HeldMessage
        var custody: Custody
        /// Forwarded copies with no final answer yet.
        var outstanding: Int
        /// Calls off the accept timer.
        var timer: StopSignal
    }

    /// Senders by their server transaction key.
    private var senders: [String: Sender] = [:]
    /// The sender waiting on each held message.
    private var senderForHeld: [String: String] = [:]

    subscript(key: String) -> Sender? { senders[key] }

    /// Adds a sender (of a message already held when its custody is `held`).
    mutating func add(_ sender: Sender, key: String) {
        senders[key] = sender
        if sender.custody == .held { senderForHeld[sender.record.id] = key }
    }

    /// The sender waiting on a held message, if any.
    func key(forHeld id: String) -> String? { senderForHeld[id] }

    /// One more copy of the sender's MESSAGE is on its way.
    mutating func copySent(_ key: String) { senders[key]?.outstanding += 1 }

    /// The sender's message is now held (its accept timeout came before any device answered).
    mutating func markHeld(_ key: String) {
        guard var sender = senders[key] else { return }
        sender.custody = .held
        senders[key] = sender
        senderForHeld[sender.record.id] = key
    }

    /// A copy failed with `status`: the status to answer the sender with when it was the last copy and the message
    /// is not held, else nil.
    mutating func copyFailed(_ key: String, status: Int) -> Int? {
        guard var sender = senders[key] else { return nil }
        sender.outstanding -= 1
        senders[key] = sender
        guard sender.outstanding <= 0, sender.custody == .forwarded else { return nil }
        return status >= 300 ? status : 480
    }

    /// Removes a sender to answer it, calling off its timer; nil when it was answered already.
    mutating func take(_ key: String) -> Sender? {
        guard let sender = senders.removeValue(forKey: key) else { return nil }
        sender.timer.stop()
        if senderForHeld[sender.record.id] == key { senderForHeld[sender.record.id] = nil }
        return sender
    }

    /// Calls off every timer and forgets the senders (the server is stopping).
    mutating func removeAll() {
        for (_, sender) in senders { sender.timer.stop() }
        senders = [:]
        senderForHeld = [:]
    }
}
