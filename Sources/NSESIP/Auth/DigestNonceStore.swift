import NSECrypto

/// Server-side nonce bookkeeping: issued nonces expire, and nonce counts must increase (replay protection).
public struct DigestNonceStore: Sendable {
    /// The result of checking credentials against the store.
    public enum Check: Sendable, Equatable {
        /// Nonce known, fresh, and the nonce count is new.
        case valid
        /// Nonce known but expired: challenge again with `stale=true`.
        case stale
        /// Nonce never issued (or evicted).
        case unknown
        /// Nonce count not higher than one already seen.
        case replayed
    }

    private struct Entry: Sendable {
        var issued: ContinuousClock.Instant
        var highestCount: UInt32
    }

    /// How long a nonce stays valid.
    public var lifetime: Duration
    /// Upper bound on remembered nonces (oldest evicted first).
    public var capacity: Int
    private var entries: [String: Entry] = [:]
    private var order: [String] = []

    /// Creates a store.
    public init(lifetime: Duration = .seconds(300), capacity: Int = 1024) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Issues and remembers a new random nonce.
    public mutating func issue(now: ContinuousClock.Instant = .now) -> String {
        let nonce = Hex.random(bytes: 16)
        if order.count >= capacity, !order.isEmpty {
            entries[order.removeFirst()] = nil
        }
        entries[nonce] = Entry(issued: now, highestCount: 0)
        order.append(nonce)
        return nonce
    }

    /// Checks the nonce and nonce count of credentials, recording the count when valid.
    public mutating func check(_ credentials: DigestCredentials, now: ContinuousClock.Instant = .now) -> Check {
        guard var entry = entries[credentials.nonce] else { return .unknown }
        if now - entry.issued > lifetime { return .stale }
        if let ncText = credentials.nonceCount {
            guard let nc = UInt32(ncText, radix: 16), nc > entry.highestCount else { return .replayed }
            entry.highestCount = nc
            entries[credentials.nonce] = entry
        }
        return .valid
    }
}
