/// Non-INVITE server transaction state (RFC 3261 §17.2.2): detects retransmitted requests and keeps final responses.
public struct SIPServerTransactionTable: Sendable {
    /// What to do with a received request.
    public enum Disposition: Sendable, Equatable {
        /// A new transaction: handle the request and call `store(response:for:)` with the final response.
        case new(key: String)
        /// A retransmission: re-send these bytes (the latest response stored), or nothing when none was (nil).
        case retransmission(response: [UInt8]?)
    }

    private struct Entry: Sendable {
        var response: [UInt8]?
        var created: ContinuousClock.Instant
    }

    /// How long a completed transaction absorbs retransmissions (Timer J, 64*T1).
    public var lifetime: Duration
    /// Upper bound on remembered transactions (oldest evicted first).
    public var capacity: Int
    private var entries: [String: Entry] = [:]
    private var order: [String] = []

    /// Creates a table with the given lifetime and capacity.
    public init(lifetime: Duration = SIPTimers.default.timerF, capacity: Int = 512) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Number of remembered transactions.
    public var count: Int { entries.count }

    /// Classifies a received request (ACK is never a transaction and yields `.retransmission(nil)`).
    public mutating func receive(_ request: SIPRequest, now: ContinuousClock.Instant = .now) -> Disposition {
        if request.method.uppercased() == "ACK" { return .retransmission(response: nil) }
        let key = SIPServerTransactionTable.key(for: request)
        if let existing = entries[key] { return .retransmission(response: existing.response) }
        prune(now: now)
        entries[key] = Entry(response: nil, created: now)
        order.append(key)
        return .new(key: key)
    }

    /// Stores the latest response bytes of a transaction (provisional or final) so that retransmissions get it again.
    public mutating func store(response: [UInt8], for key: String) {
        if entries[key] != nil { entries[key]?.response = response }
    }

    /// The transaction key of a request: top Via branch + sent-by + method, or RFC 2543 fields without a magic cookie.
    /// With `method`, the key of the transaction with that method the request belongs with: a CANCEL's INVITE
    /// (§9.2: the same branch, sent-by and CSeq number).
    public static func key(for request: SIPRequest, method: String? = nil) -> String {
        let method = (method ?? request.method).uppercased()
        let via = request.headers.topVia
        if let branch = via?.branch, branch.hasPrefix(SIPIdentifiers.magicCookie) {
            return "\(branch)|\(via?.host ?? ""):\(via?.port ?? 0)|\(method)"
        }
        let cseq = request.headers.cseq
        return "\(request.headers.callID ?? "")|\(request.headers.from?.tag ?? "")|\(cseq?.sequence ?? 0)|\(method)"
    }

    private mutating func prune(now: ContinuousClock.Instant) {
        var drop = 0
        while drop < order.count {
            let key = order[drop]
            let expired = entries[key].map { now - $0.created > lifetime } ?? true
            guard expired || order.count - drop >= capacity else { break }
            entries[key] = nil
            drop += 1
        }
        if drop > 0 { order.removeFirst(drop) }
    }
}
