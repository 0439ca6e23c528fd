import Synchronization

/// Rules kept in the order they were added, each used a number of times or until removed, shared between threads:
/// the faults a server plays (`nse serve`'s, `nse files`'), counted down as requests take them.
public final class CountedRules<Rule: Sendable>: Sendable {
    /// A rule and what is left of it.
    public struct Entry: Sendable {
        public let id: Int
        public let rule: Rule
        /// Uses left; nil: every one until it is removed.
        public var remaining: Int?
    }

    private struct State {
        var entries: [Entry] = []
        var nextID = 1
    }

    private let state = Mutex(State())

    public init() {}

    /// Adds a rule after the others, for `count` uses (nil: until removed); its entry.
    @discardableResult
    public func add(_ rule: Rule, count: Int?) -> Entry {
        state.withLock { state in
            let entry = Entry(id: state.nextID, rule: rule, remaining: count)
            state.nextID += 1
            state.entries.append(entry)
            return entry
        }
    }

    /// Removes one rule; false when there is none with that id.
    public func remove(id: Int) -> Bool {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == id }) else { return false }
            state.entries.remove(at: index)
            return true
        }
    }

    /// Removes every rule.
    public func clear() {
        state.withLock { $0.entries = [] }
    }

    /// The rules not used up, oldest first.
    public var entries: [Entry] { state.withLock { $0.entries } }

    /// One use: `choose` picks, from the rules in order, the positions of those it takes; each is counted down
    /// (and dropped once used up), atomically with the choice. The rules taken, oldest first.
    public func take(_ choose: ([Entry]) -> [Int]) -> [Entry] {
        state.withLock { state in
            let chosen = Set(choose(state.entries))
            var taken: [Entry] = []
            var kept: [Entry] = []
            for (index, var entry) in state.entries.enumerated() {
                guard chosen.contains(index) else {
                    kept.append(entry)
                    continue
                }
                taken.append(entry)
                if let remaining = entry.remaining {
                    guard remaining > 1 else { continue }
                    entry.remaining = remaining - 1
                }
                kept.append(entry)
            }
            state.entries = kept
            return taken
        }
    }
}
