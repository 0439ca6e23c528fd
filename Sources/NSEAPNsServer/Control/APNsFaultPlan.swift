public import NSEJSON
public import NSESystem
import Synchronization

/// The faults `nse serve` injects now: scripted rules consumed push by push, in the order they were added, and
/// whether the whole server plays unavailable (every push answered 503 until it is back).
public final class APNsFaultPlan: Sendable {
    /// A rule and what is left of it.
    public typealias Entry = CountedRules<FaultRule>.Entry

    private let rules = CountedRules<FaultRule>()
    /// The reason every push is answered 503 with while unavailable.
    private let unavailableReason = Mutex<String?>(nil)

    public init(rules: [FaultRule] = [], unavailable: String? = nil) {
        for rule in rules { add(rule) }
        unavailableReason.withLock { $0 = unavailable }
    }

    /// Adds a rule after the others; returns its entry.
    @discardableResult
    public func add(_ rule: FaultRule) -> Entry { rules.add(rule, count: rule.uses) }

    /// Removes one rule; false if there is none with that id.
    public func remove(id: Int) -> Bool { rules.remove(id: id) }

    /// Removes every rule (the unavailable switch stays as it is).
    public func clear() { rules.clear() }

    /// The rules not used up yet, oldest first.
    public var entries: [Entry] { rules.entries }

    /// Plays unavailable (every push answered 503 with `reason`), or is back with `nil`.
    public func setUnavailable(_ reason: String?) {
        unavailableReason.withLock { $0 = reason }
    }

    /// The 503 every push gets while unavailable.
    public var unavailable: APNsError? {
        unavailableReason.withLock { $0 }.map { APNsError(503, $0) }
    }

    /// The first rule that applies to a push to `token`, used once (and dropped when used up); nil: none.
    public func take(token: String) -> (id: Int, rule: FaultRule)? {
        let token = token.lowercased()
        let taken = rules.take { entries in
            entries.firstIndex { $0.rule.connection == nil && ($0.rule.token == nil || $0.rule.token == token) }
                .map { [$0] } ?? []
        }
        return taken.first.map { ($0.id, $0.rule) }
    }

    /// The first `connect_delay` rule, used once by a new connection: how long to leave it unread.
    public func takeConnectDelay() -> Double? {
        takeConnection { if case .connectDelay(let seconds) = $0 { seconds } else { nil } }
    }

    /// The first `settings_delay` rule, used once by a new HTTP/2 connection: how long its SETTINGS frame waits.
    public func takeSettingsDelay() -> Double? {
        takeConnection { if case .settingsDelay(let seconds) = $0 { seconds } else { nil } }
    }

    /// The tightest `max_connections` rule (never used up): its id and cap.
    public var connectionCap: (id: Int, cap: Int)? {
        entries.compactMap { entry -> (id: Int, cap: Int)? in
            guard case .maxConnections(let cap) = entry.rule.connection else { return nil }
            return (entry.id, cap)
        }.min { $0.cap < $1.cap }
    }

    private func takeConnection(_ seconds: (FaultRule.ConnectionFault) -> Double?) -> Double? {
        let taken = rules.take { entries in
            entries.firstIndex { $0.rule.connection.flatMap(seconds) != nil }.map { [$0] } ?? []
        }
        return taken.first?.rule.connection.flatMap(seconds)
    }

    /// `GET /v1/control/faults`: `{"unavailable": REASON or null, "rules": [...]}`.
    public var json: JSON {
        ["unavailable": .string(unavailableReason.withLock { $0 }), "rules": .array(entries.map(\.json))]
    }
}

extension CountedRules<FaultRule>.Entry {
    /// The rule's JSON with its `id` and what is left (`remaining`; null for a cap, which stays until removed).
    public var json: JSON {
        var object = rule.json.objectValue ?? JSONObject()
        object["id"] = .int(id)
        object["remaining"] = remaining.map { .int($0) } ?? .null
        return .object(object)
    }
}
