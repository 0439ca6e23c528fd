public import NSEJSON

/// `UNUserNotificationCenter.add(_:)`: a local notification the extension asks the system to show, now (no trigger)
/// or when its trigger fires. The host answers with `add-notification-result` (docs/protocol.md).
public struct NotificationAddition: Sendable, Equatable, JSONConvertible {
    /// The request's identifier: one shown or pending with the same identifier is replaced.
    public var identifier: String
    /// The content, APNs-shaped as a `content` line's (`aps` and the user-info keys).
    public var content: JSONObject
    /// Nil: shown at once.
    public var trigger: Trigger?

    public init(identifier: String, content: JSONObject, trigger: Trigger? = nil) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }

    /// When a scheduled local notification fires: its first firing, worked out by the extension's framework (it has
    /// the calendar and the time zone), and what the app asked for.
    public struct Trigger: Sendable, Equatable, JSONConvertible {
        public enum Kind: String, Sendable, Equatable, JSONConvertible, CaseIterable {
            /// `UNTimeIntervalNotificationTrigger`.
            case timeInterval = "time-interval"
            /// `UNCalendarNotificationTrigger`.
            case calendar
        }

        public var kind: Kind
        public var repeats: Bool
        /// The first firing, Unix milliseconds.
        public var fireAt: Int64
        /// A time-interval trigger's interval, in seconds.
        public var seconds: Double?
        /// A calendar trigger's date components, as the app gave them (`{"hour": 9, "minute": 30}`).
        public var dateComponents: JSONObject?
        /// A repeating calendar trigger's firings from the first (`fireAt`), Unix milliseconds, ascending: worked out
        /// by the framework, which has the calendar and the time zone (the host has neither), at most
        /// ``maxFirings`` within ``firingsHorizonMilliseconds`` of the first. Nil: it is kept pending and never fires.
        public var firings: [Int64]?

        /// The most firings a repeating calendar trigger carries: a daily one's 400 days, an hourly one's 20 days, a
        /// minute's 8 hours. ~7 KB of JSON: the 64 pending requests an app may have fit in half of what Notification
        /// Center's log is rewritten at, and a request's line stays far below the protocol's 64 KiB.
        public static let maxFirings = 500
        /// How far past its first firing a repeating calendar trigger's firings go.
        public static let firingsHorizonMilliseconds: Int64 = 400 * 86_400_000

        public init(
            kind: Kind, repeats: Bool, fireAt: Int64, seconds: Double? = nil, dateComponents: JSONObject? = nil,
            firings: [Int64]? = nil
        ) {
            self.kind = kind
            self.repeats = repeats
            self.fireAt = fireAt
            self.seconds = seconds
            self.dateComponents = dateComponents
            self.firings = firings
        }

        /// Whether `firings` can be a repeating calendar trigger's: its first firing first, ascending, at most
        /// ``maxFirings`` within ``firingsHorizonMilliseconds``.
        public static func firingsAreValid(_ firings: [Int64], first: Int64) -> Bool {
            guard firings.first == first, firings.count <= maxFirings,
                zip(firings, firings.dropFirst()).allSatisfy({ $0 < $1 }), let last = firings.last
            else { return false }
            // Any two integers may come from an extension not built on the framework.
            let (span, overflow) = last.subtractingReportingOverflow(first)
            return !overflow && span <= firingsHorizonMilliseconds
        }

        /// Why an interval of `seconds` cannot make a time-interval trigger, in the words of iOS's exception; nil
        /// when it can. UserNotifications stops the process with it, the host refuses the request for it.
        public static func intervalProblem(seconds: Double, repeats: Bool) -> String? {
            guard seconds > 0 else { return "time interval must be greater than 0" }
            guard !repeats || seconds >= 60 else { return "time interval must be at least 60 if repeating" }
            return nil
        }

        public static var jsonKind: String { "an object" }

        public var json: JSON {
            var object: JSONObject = [
                "type": .string(kind.rawValue), "repeats": .bool(repeats), "fire_at": .int(fireAt),
            ]
            if let seconds { object["seconds"] = .double(seconds) }
            if let dateComponents { object["date_components"] = .object(dateComponents) }
            if let firings { object["firings"] = .array(firings.map(JSON.int)) }
            return .object(object)
        }

        public init(json: JSON) throws(JSONFieldError) {
            let object = try JSONObject(json: json)
            kind = try object.field("type")
            repeats = try object.field("repeats") ?? false
            fireAt = try object.field("fire_at")
            seconds = try object.field("seconds")
            dateComponents = try object.field("date_components")
            switch object["firings"] {
            case nil, .null?:
                firings = nil
            case .array(let items)?:
                var times: [Int64] = []
                for (index, item) in items.enumerated() {
                    do { times.append(try Int64(json: item)) } catch { throw error.inside(["firings", "\(index)"]) }
                }
                firings = times
            case let other?:
                throw JSONFieldError(expected: "an array of integers", butGot: other).inside(["firings"])
            }
        }
    }

    public static var jsonKind: String { "an object" }

    /// The `add-notification` line.
    public var json: JSON {
        [
            "type": "add-notification", "identifier": .string(identifier), "content": .object(content),
            "trigger": trigger?.json ?? .null,
        ]
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        identifier = try object.field("identifier")
        content = try object.field("content")
        trigger = try object.field("trigger")
    }
}

/// Why the host refused an `add-notification`: `UNError`'s codes (domain `UNErrorDomain`).
public enum NotificationAdditionError: Int, Error, Sendable, Equatable, CaseIterable, JSONConvertible {
    /// The app may not show notifications (`UNError.notificationsNotAllowed`).
    case notificationsNotAllowed = 1
    /// The trigger gives no date to fire at (`UNError.notificationInvalidNoDate`).
    case notificationInvalidNoDate = 1400
    /// The content has no title, subtitle or body (`UNError.notificationInvalidNoContent`).
    case notificationInvalidNoContent = 1401

    public static var jsonKind: String { "an object with a UNError code" }

    public var name: String {
        switch self {
        case .notificationsNotAllowed: "notificationsNotAllowed"
        case .notificationInvalidNoDate: "notificationInvalidNoDate"
        case .notificationInvalidNoContent: "notificationInvalidNoContent"
        }
    }

    /// `{"domain": "UNErrorDomain", "code", "name"}`.
    public var json: JSON {
        ["domain": "UNErrorDomain", "code": .int(Int64(rawValue)), "name": .string(name)]
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        let code: Int = try object.field("code")
        guard let error = Self(rawValue: code) else {
            throw JSONFieldError(
                path: ["code"], expected: "1, 1400 or 1401", problem: .found(String(code)))
        }
        self = error
    }
}
