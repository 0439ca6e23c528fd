public import NSEJSON
import Synchronization

/// The faults `nse serve` injects now: scripted rules consumed push by push, in the order they were added, and
/// whether the whole server plays unavailable (every push answered 503 until it is back).
public final class APNsFaultPlan: Sendable {
    /// A rule and what is left of it.
    public struct Entry: Sendable {
        public let id: Int
        public let rule: FaultRule
        public var remaining: Int

        public var json: JSON {
            var object = rule.json.objectValue ?? JSONObject()
            object["id"] = .int(id)
            object["remaining"] = .int(remaining)
            return .object(object)
        }
    }

    private struct State {
        var entries: [Entry] = []
        var nextID = 1
        /// The reason every push is answered 503 with while unavailable.
        var unavailable: String?
    }

    private let state = Mutex(State())

    public init(rules: [FaultRule] = [], unavailable: String? = nil) {
        for rule in rules { add(rule) }
        state.withLock { $0.unavailable = unavailable }
    }

    /// Adds a rule after the others; returns its entry.
    @discardableResult
    public func add(_ rule: FaultRule) -> Entry {
        state.withLock { state in
            let entry = Entry(id: state.nextID, rule: rule, remaining: rule.count)
            state.nextID += 1
            state.entries.append(entry)
            return entry
        }
    }

    /// Removes one rule; false if there is none with that id.
    public func remove(id: Int) -> Bool {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == id }) else { return false }
            state.entries.remove(at: index)
            return true
        }
    }

    /// Removes every rule (the unavailable switch stays as it is).
    public func clear() {
        state.withLock { $0.entries = [] }
    }

    /// The rules not used up yet, oldest first.
    public var entries: [Entry] { state.withLock { $0.entries } }

    /// Plays unavailable (every push answered 503 with `reason`), or is back with `nil`.
    public func setUnavailable(_ reason: String?) {
        state.withLock { $0.unavailable = reason }
    }

    /// The 503 every push gets while unavailable.
    public var unavailable: APNsError? {
        state.withLock { $0.unavailable }.map { APNsError(503, $0) }
    }

    /// The first rule that applies to a push to `token`, used once (and dropped when used up); nil: none.
    public func take(token: String) -> (id: Int, rule: FaultRule)? {
        let token = token.lowercased()
        return state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.rule.token == nil || $0.rule.token == token })
            else { return nil }
            state.entries[index].remaining -= 1
            let entry = state.entries[index]
            if entry.remaining == 0 { state.entries.remove(at: index) }
            return (entry.id, entry.rule)
        }
    }

    /// `GET /v1/control/faults`: `{"unavailable": REASON or null, "rules": [...]}`.
    public var json: JSON {
        let (entries, unavailable) = state.withLock { ($0.entries, $0.unavailable) }
        return ["unavailable": .string(unavailable), "rules": .array(entries.map(\.json))]
    }
}
