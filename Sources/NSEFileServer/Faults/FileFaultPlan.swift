public import NSEJSON
import Synchronization

/// The faults `nse files` injects now: rules in the order they were added, each for one file or every file, each
/// for a number of downloads or until it is removed.
///
/// A download takes, of each kind, the oldest rule that matches its file, and each rule it takes counts down once: a
/// `delay` and a `slow` rule apply together, two `slow` rules do not. A HEAD takes only `delay` and `not-found`.
public final class FileFaultPlan: Sendable {
    /// A rule and what is left of it.
    public struct Entry: Sendable {
        public let id: Int
        public let fault: FileFault
        /// Downloads it still applies to; nil: every one.
        public var remaining: Int?

        public var json: JSON {
            var object = fault.json.objectValue ?? JSONObject()
            object["id"] = .int(Int64(id))
            object["remaining"] = .int(remaining)
            return .object(object)
        }
    }

    /// What one download gets: at most one rule of each kind.
    struct Applied: Sendable, Equatable {
        var delay: Double?
        var notFound = false
        var bytesPerSecond: Int?
        var truncateAfter: Int?
        var wrongHash = false
        /// The rules taken, as the request log names them (`slow`, `delay`…), in the order they were added.
        var names: [String] = []
    }

    private struct State {
        var entries: [Entry] = []
        var nextID = 1
    }

    private let state = Mutex(State())

    public init(_ faults: [FileFault] = []) {
        for fault in faults { add(fault) }
    }

    /// Adds a rule after the others; returns its entry.
    @discardableResult
    public func add(_ fault: FileFault) -> Entry {
        state.withLock { state in
            let entry = Entry(id: state.nextID, fault: fault, remaining: fault.count)
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

    /// `GET /control/faults`: `{"rules": [...]}`.
    public var json: JSON { ["rules": .array(entries.map(\.json))] }

    /// The rules a download of `file` takes (counted down, and dropped when used up); `head`: a HEAD, which takes
    /// only those that do not change the body.
    func take(file: String, head: Bool) -> Applied {
        state.withLock { state in
            var applied = Applied()
            var taken: Set<String> = []
            var index = 0
            while index < state.entries.count {
                let entry = state.entries[index]
                let effect = entry.fault.effect
                guard entry.fault.file == nil || entry.fault.file == file, !taken.contains(effect.name),
                    !(head && effect.altersBody)
                else {
                    index += 1
                    continue
                }
                taken.insert(effect.name)
                applied.names.append(effect.name)
                switch effect {
                case .slow(let rate): applied.bytesPerSecond = rate
                case .truncate(let bytes): applied.truncateAfter = bytes
                case .notFound: applied.notFound = true
                case .wrongHash: applied.wrongHash = true
                case .delay(let seconds): applied.delay = seconds
                }
                if let remaining = entry.remaining {
                    if remaining <= 1 {
                        state.entries.remove(at: index)
                        continue
                    }
                    state.entries[index].remaining = remaining - 1
                }
                index += 1
            }
            return applied
        }
    }
}
