public import NSEJSON

/// The `aps` dictionary of a push, read leniently as iOS does: keys of the wrong type are ignored, and noted.
public struct APS: Sendable, Equatable {
    /// The alert: absent, a plain string, or a dictionary.
    public enum Alert: Sendable, Equatable {
        case none
        case text(String)
        case fields(AlertFields)
    }

    /// The keys of an alert dictionary.
    public struct AlertFields: Sendable, Equatable {
        public var title: String?
        public var subtitle: String?
        public var body: String?
        public var titleLocKey: String?
        public var titleLocArgs: [String]?
        public var subtitleLocKey: String?
        public var subtitleLocArgs: [String]?
        public var locKey: String?
        public var locArgs: [String]?
        public var actionLocKey: String?
        public var launchImage: String?

        public init() {}
    }

    public var alert: Alert = .none
    public var badge: Int64?
    /// `sound` as a name, or the name of a critical-alert sound dictionary.
    public var sound: String?
    public var criticalSound: Bool = false
    public var threadID: String?
    public var category: String?
    public var contentAvailable: Bool = false
    public var mutableContent: Bool = false
    public var targetContentID: String?
    public var interruptionLevel: String?
    public var relevanceScore: Double?

    public init() {}

    /// Reads an `aps` object; every ignored key adds a line to `warnings`.
    public init(_ object: JSONObject, warnings: inout [String]) {
        func note(_ key: String, _ expected: String, _ value: JSON) {
            warnings.append("aps.\(key) is a \(value.typeName), not \(expected): iOS ignores it")
        }
        for (key, value) in object {
            switch key {
            case "alert":
                switch value {
                case .string(let text): alert = .text(text)
                case .object(let fields): alert = .fields(AlertFields(fields, warnings: &warnings))
                default: note(key, "a string or a dictionary", value)
                }
            case "badge":
                if let number = value.intValue { badge = number } else { note(key, "a number", value) }
            case "sound":
                switch value {
                case .string(let name): sound = name
                case .object(let dictionary):
                    sound = dictionary["name"]?.stringValue
                    criticalSound = (dictionary["critical"]?.intValue ?? 0) == 1
                default: note(key, "a string or a dictionary", value)
                }
            case "thread-id":
                if let text = value.stringValue { threadID = text } else { note(key, "a string", value) }
            case "category":
                if let text = value.stringValue { category = text } else { note(key, "a string", value) }
            case "content-available":
                if let number = value.intValue {
                    contentAvailable = number == 1
                } else {
                    note(key, "the number 1", value)
                }
            case "mutable-content":
                if let number = value.intValue {
                    mutableContent = number == 1
                } else {
                    note(key, "the number 1", value)
                }
            case "target-content-id":
                if let text = value.stringValue { targetContentID = text } else { note(key, "a string", value) }
            case "interruption-level":
                if let text = value.stringValue, ["passive", "active", "time-sensitive", "critical"].contains(text) {
                    interruptionLevel = text
                } else {
                    warnings.append(
                        "aps.interruption-level must be passive, active, time-sensitive or critical: iOS ignores it")
                }
            case "relevance-score":
                if let number = value.doubleValue { relevanceScore = number } else { note(key, "a number", value) }
            default:
                break
            }
        }
    }
}

extension APS.AlertFields {
    init(_ object: JSONObject, warnings: inout [String]) {
        self.init()
        func text(_ key: String) -> String? {
            guard let value = object[key] else { return nil }
            if let string = value.stringValue { return string }
            warnings.append("aps.alert.\(key) is a \(value.typeName), not a string: iOS ignores it")
            return nil
        }
        func list(_ key: String) -> [String]? {
            guard let value = object[key] else { return nil }
            guard let array = value.arrayValue else {
                warnings.append("aps.alert.\(key) is a \(value.typeName), not an array: iOS ignores it")
                return nil
            }
            // iOS formats numbers in loc-args too; strings and numbers are both accepted.
            return array.map { element in
                switch element {
                case .string(let string): string
                case .int(let number): String(number)
                case .double(let number): "\(number)"
                default: ""
                }
            }
        }
        title = text("title")
        subtitle = text("subtitle")
        body = text("body")
        titleLocKey = text("title-loc-key")
        titleLocArgs = list("title-loc-args")
        subtitleLocKey = text("subtitle-loc-key")
        subtitleLocArgs = list("subtitle-loc-args")
        locKey = text("loc-key")
        locArgs = list("loc-args")
        actionLocKey = text("action-loc-key")
        launchImage = text("launch-image")
    }
}
