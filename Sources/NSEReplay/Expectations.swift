public import NSEJSON

/// Compares a case's `expect` with the result: only what the case states is checked, so volatile fields (timings,
/// request ids, RSS, UUIDs) never make a case fail.
public enum Expectations {
    /// One line per mismatch, e.g. `outcome: expected rewritten, got fallback`.
    public static func compare(expected: JSONObject, actual: JSON) -> [String] {
        var differences: [String] = []
        func show(_ value: JSON?) -> String { value.map { $0.serialized() } ?? "(absent)" }
        for (key, want) in expected {
            switch key {
            case "outcome", "apns_reason", "sender":
                if actual[key] != want {
                    differences.append("\(key): expected \(show(want)), got \(show(actual[key]))")
                }
            case "preview_hidden":
                // Absent in a result means false.
                if (actual[key] ?? false) != want {
                    differences.append("\(key): expected \(show(want)), got \(show(actual[key]))")
                }
            case "reason":
                let got = actual["reason"]?.stringValue ?? ""
                if let prefix = want.stringValue, !got.hasPrefix(prefix) {
                    differences.append("reason: expected it to start with \(show(want)), got \(show(actual["reason"]))")
                }
            case "reason_contains":
                let got = actual["reason"]?.stringValue ?? ""
                if let part = want.stringValue, !got.contains(part) {
                    differences.append("reason: expected it to contain \(show(want)), got \(show(actual["reason"]))")
                }
            case "display":
                if actual["display"] != want {
                    differences.append("display: expected \(show(want)), got \(show(actual["display"]))")
                }
            case "call_report":
                if want.isNull {
                    if actual["call_report"] != .null {
                        differences.append("call_report: expected null, got \(show(actual["call_report"]))")
                    }
                } else if let fields = want.objectValue {
                    for (field, value) in fields where actual["call_report"]?[field] != value {
                        differences.append(
                            "call_report.\(field): expected \(show(value)), got \(show(actual["call_report"]?[field]))")
                    }
                }
            case "call_timeline", "caller_timeline":
                // The steps named must all be in the timeline, at times in the order given.
                let timeline = actual[key == "call_timeline" ? "call" : "caller"]?["timeline_ms"]
                let steps = want.arrayValue?.compactMap(\.stringValue) ?? []
                let missing = steps.filter { timeline?[$0]?.doubleValue == nil }
                let times = steps.compactMap { timeline?[$0]?.doubleValue }
                if !missing.isEmpty {
                    differences.append("\(key): expected \(show(want)), missing \(missing.joined(separator: ", "))")
                } else if times != times.sorted() {
                    differences.append("\(key): expected the steps in the order \(show(want)), got \(show(timeline))")
                }
            case "notification", "info", "voip", "extension", "call", "caller", "communication", "attachments",
                "local_notifications":
                let base: JSON? = key == "info" ? actual["extension"]?["info"] : actual[key]
                for (path, value) in want.objectValue ?? [:] {
                    let got = lookup(base, path)
                    // An expected null also matches an absent key; a number matches the same number written as a
                    // real (3600 and 3600.0).
                    if !matches(got, value) {
                        differences.append("\(key).\(path): expected \(show(value)), got \(show(got))")
                    }
                }
            case "warnings_contain":
                let warnings = actual["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if let part = want.stringValue, !warnings.contains(where: { $0.contains(part) }) {
                    differences.append(
                        "warnings: expected one containing \(show(want)), got \(show(actual["warnings"]))")
                }
            default:
                differences.append("expect.\(key): not something a case can expect")
            }
        }
        return differences
    }

    /// The first member of an `expect` that a case cannot mean as written: an unknown name, or a value of the
    /// wrong kind (a reason that is a number would otherwise check nothing and let every result pass).
    public static func problem(in expect: JSONObject) -> (key: String, message: String)? {
        for (key, value) in expect {
            let wanted: String?
            switch key {
            case "outcome", "apns_reason", "sender", "reason", "reason_contains", "warnings_contain":
                wanted = value.stringValue != nil ? nil : "a string"
            case "display", "call_report":
                wanted = value.isNull || value.objectValue != nil ? nil : "an object or null"
            case "preview_hidden":
                wanted = value.boolValue != nil ? nil : "a boolean"
            case "call_timeline", "caller_timeline":
                let steps = value.arrayValue
                wanted = steps != nil && steps!.allSatisfy { $0.stringValue != nil } ? nil : "an array of step names"
            case "notification", "info", "voip", "extension", "call", "caller", "communication", "attachments",
                "local_notifications":
                wanted = value.objectValue != nil ? nil : "an object of dotted paths and their values"
            default:
                return (key, "is not something a case can expect")
            }
            if let wanted { return (key, "must be \(wanted), not a \(value.typeName)") }
        }
        return nil
    }

    /// Whether `got` is what a case expects at a path.
    static func matches(_ got: JSON?, _ expected: JSON) -> Bool {
        if got == expected || (expected.isNull && got == nil) { return true }
        guard let wanted = expected.doubleValue, let value = got?.doubleValue else { return false }
        return wanted == value
    }

    /// A dotted path into a value (`aps.alert.title`); a number indexes an array (`0.type`).
    static func lookup(_ value: JSON?, _ path: String) -> JSON? {
        var current = value
        for part in path.split(separator: ".") {
            if let items = current?.arrayValue, let index = Int(part) {
                current = items.indices.contains(index) ? items[index] : nil
            } else {
                current = current?[String(part)]
            }
        }
        return current
    }
}
