public import NSEJSON
public import NSESystem

/// The faults `nse files` injects now: rules in the order they were added, each for one file or every file, each
/// for a number of downloads or until it is removed.
///
/// A download takes, of each kind, the oldest rule that matches its file, and each rule it takes counts down once: a
/// `delay` and a `slow` rule apply together, two `slow` rules do not. A HEAD takes only `delay` and `not-found`.
public final class FileFaultPlan: Sendable {
    /// A rule and what is left of it.
    public typealias Entry = CountedRules<FileFault>.Entry

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

    private let rules = CountedRules<FileFault>()

    public init(_ faults: [FileFault] = []) {
        for fault in faults { add(fault) }
    }

    /// Adds a rule after the others; returns its entry.
    @discardableResult
    public func add(_ fault: FileFault) -> Entry { rules.add(fault, count: fault.count) }

    /// Removes one rule; false when there is none with that id.
    public func remove(id: Int) -> Bool { rules.remove(id: id) }

    /// Removes every rule.
    public func clear() { rules.clear() }

    /// The rules not used up, oldest first.
    public var entries: [Entry] { rules.entries }

    /// `GET /control/faults`: `{"rules": [...]}`.
    public var json: JSON { ["rules": .array(entries.map(\.json))] }

    /// The rules a download of `file` takes (counted down, and dropped when used up); `head`: a HEAD, which takes
    /// only those that do not change the body.
    func take(file: String, head: Bool) -> Applied {
        let taken = rules.take { entries in
            var kinds: Set<String> = []
            return entries.indices.filter { index in
                let fault = entries[index].rule
                guard fault.file == nil || fault.file == file, !(head && fault.effect.altersBody) else { return false }
                return kinds.insert(fault.effect.name).inserted
            }
        }
        var applied = Applied()
        for entry in taken {
            let effect = entry.rule.effect
            applied.names.append(effect.name)
            switch effect {
            case .slow(let rate): applied.bytesPerSecond = rate
            case .truncate(let bytes): applied.truncateAfter = bytes
            case .notFound: applied.notFound = true
            case .wrongHash: applied.wrongHash = true
            case .delay(let seconds): applied.delay = seconds
            }
        }
        return applied
    }
}

extension CountedRules<FileFault>.Entry {
    /// The rule's JSON with its `id` and what is left (`remaining`, null: until removed).
    public var json: JSON {
        var object = rule.json.objectValue ?? JSONObject()
        object["id"] = .int(Int64(id))
        object["remaining"] = .int(remaining)
        return .object(object)
    }
}
