public import NSEJSON

extension NotificationCenterLog {
    /// A notification shown: its request's identifier, when it was shown, the content as delivered (in an APNs
    /// payload's shape) and what the lock screen showed of it.
    public struct Delivered: Sendable, Equatable {
        public var identifier: String
        /// Unix milliseconds.
        public var date: Int64
        public var notification: JSONObject
        public var title: String
        public var subtitle: String
        public var body: String
        /// Nil for a push; for a local notification the app added, `{}` (no trigger: shown when added) or
        /// `{"trigger": …}`, the trigger as the app made it.
        public var local: JSONObject?

        public init(
            identifier: String, date: Int64, notification: JSONObject, title: String, subtitle: String, body: String,
            local: JSONObject? = nil
        ) {
            self.identifier = identifier
            self.date = date
            self.notification = notification
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.local = local
        }

        var json: JSON {
            var object: JSONObject = [
                "identifier": .string(identifier), "date": .int(date), "notification": .object(notification),
                "title": .string(title), "subtitle": .string(subtitle), "body": .string(body),
            ]
            if let local { object["local"] = .object(local) }
            return .object(object)
        }

        init?(json: JSON) {
            guard let identifier = json["identifier"]?.stringValue, let date = json["date"]?.intValue,
                let notification = json["notification"]?.objectValue
            else { return nil }
            self.init(
                identifier: identifier, date: date, notification: notification,
                title: json["title"]?.stringValue ?? "", subtitle: json["subtitle"]?.stringValue ?? "",
                body: json["body"]?.stringValue ?? "", local: json["local"]?.objectValue)
        }
    }

    /// A local notification waiting for its trigger (`UNUserNotificationCenter.add` with a time or calendar trigger).
    public struct Scheduled: Sendable, Equatable {
        /// What it shows when it fires (its trigger in `local`); its `date` is its first firing.
        public var notification: Delivered
        /// A repeating time-interval trigger: it fires again this many milliseconds after each firing.
        public var every: Int64?
        /// A repeating calendar trigger: its firings from the first (its `date`), ascending, as the framework worked
        /// them out (the log has no calendar or time zone). Once past the last it stays pending and fires no more.
        public var firings: [Int64]?
        /// False for a repeating calendar trigger added without its firings (an extension not built on the
        /// framework): kept and listed, never fired (docs/sdk.md).
        public var fires: Bool
        /// A repeating trigger's last firing shown, Unix milliseconds.
        public var fired: Int64?

        public init(notification: Delivered, every: Int64? = nil, firings: [Int64]? = nil, fires: Bool = true) {
            self.notification = notification
            self.every = every
            self.firings = firings
            self.fires = fires
        }

        public var identifier: String { notification.identifier }

        /// When it fires next; nil when it fires no more (a repeating calendar trigger without firings, or past
        /// its last).
        public var nextFire: Int64? {
            guard fires else { return nil }
            if let firings {
                guard let fired else { return firings.first }
                return firings.first { $0 > fired }
            }
            guard let every, let fired else { return notification.date }
            // A log written by hand may hold any numbers: one past Int64 fires no more.
            let (next, overflow) = fired.addingReportingOverflow(every)
            return overflow ? nil : next
        }

        /// Its latest firing due by `time` and not shown yet; nil when none is.
        func firing(by time: Int64) -> Int64? {
            guard let next = nextFire, next <= time else { return nil }
            if let firings { return firings.last { $0 <= time } }
            guard let every else { return next }
            let (span, overflow) = time.subtractingReportingOverflow(notification.date)
            guard !overflow, span >= 0 else { return next }
            return notification.date + span / every * every
        }

        /// Its place among the pending, soonest first. One that never fires here goes by its first firing (as the
        /// framework's next date for it was when it was added), one past its firings last.
        var order: Int64 { nextFire ?? (fires ? .max : notification.date) }

        /// Whether it stays pending once it has fired.
        var repeats: Bool { every != nil || firings != nil }

        var json: JSON {
            var object: JSONObject = ["notification": notification.json]
            if let every { object["every"] = .int(every) }
            if let firings { object["firings"] = .array(firings.map(JSON.int)) }
            if !fires { object["fires"] = false }
            if let fired { object["fired"] = .int(fired) }
            return .object(object)
        }

        init?(json: JSON) {
            guard let notification = json["notification"].flatMap(Delivered.init(json:)) else { return nil }
            let every = json["every"]?.intValue
            guard every.map({ $0 > 0 }) ?? true else { return nil }
            var firings: [Int64]?
            if let items = json["firings"]?.arrayValue {
                let times = items.compactMap(\.intValue)
                guard times.count == items.count, !times.isEmpty, zip(times, times.dropFirst()).allSatisfy({ $0 < $1 })
                else { return nil }
                firings = times
            }
            self.init(
                notification: notification, every: every, firings: firings, fires: json["fires"]?.boolValue ?? true)
            fired = json["fired"]?.intValue
        }
    }

    /// What Notification Center shows for the app, and the local notifications it waits to show.
    public struct State: Sendable, Equatable {
        /// Oldest first; one per identifier (a notification with the identifier of a shown one replaces it).
        public var delivered: [Delivered] = []
        /// Soonest first; one per identifier.
        public var pending: [Scheduled] = []
        /// The app icon's badge: the last `aps.badge` shown or `setBadgeCount`; nil when never set.
        public var badge: Int?

        public init() {}

        /// One line of the log. A line written since local notifications exist says when (`at`): whatever fired
        /// before it is shown first, so that a later removal removes it.
        mutating func apply(_ line: JSON) {
            if let at = line["at"]?.intValue { settle(upTo: at) }
            if let entry = line["deliver"].flatMap(Delivered.init(json:)) {
                // A local notification added without a trigger replaces a pending request with its identifier.
                if entry.local != nil { pending.removeAll { $0.identifier == entry.identifier } }
                show(entry)
            } else if let entry = line["schedule"].flatMap(Scheduled.init(json:)) {
                pending.removeAll { $0.identifier == entry.identifier }
                pending.append(entry)
                sortPending()
                // Apple: the system keeps the soonest-firing 64, a repeating one counted once.
                if pending.count > NotificationCenterLog.pendingCapacity {
                    pending.removeLast(pending.count - NotificationCenterLog.pendingCapacity)
                }
            } else if let identifiers = line["remove"]?.arrayValue {
                let gone = Set(identifiers.compactMap(\.stringValue))
                delivered.removeAll { gone.contains($0.identifier) }
            } else if line["remove_all"]?.boolValue == true {
                delivered.removeAll()
            } else if let identifiers = line["remove_pending"]?.arrayValue {
                let gone = Set(identifiers.compactMap(\.stringValue))
                pending.removeAll { gone.contains($0.identifier) }
            } else if line["remove_all_pending"]?.boolValue == true {
                pending.removeAll()
            } else if let badge = line["badge"]?.intValue {
                self.badge = Int(badge)
            }
        }

        /// Shows every pending notification due by `time` (Unix milliseconds), in the order they fired: one that
        /// does not repeat leaves the pending list, a repeating one shows its latest firing.
        mutating func settle(upTo time: Int64) {
            var fired: [Delivered] = []
            for index in pending.indices.reversed() {
                let entry = pending[index]
                guard let latest = entry.firing(by: time) else { continue }
                guard entry.repeats else {
                    fired.append(entry.notification)
                    pending.remove(at: index)
                    continue
                }
                var shown = entry.notification
                shown.date = latest
                fired.append(shown)
                pending[index].fired = latest
            }
            guard !fired.isEmpty else { return }
            for entry in fired.sorted(by: { $0.date < $1.date }) { show(entry) }
            sortPending()
        }

        /// Soonest first (``Scheduled/order``), those at the same time in the order they came.
        private mutating func sortPending() {
            pending = pending.enumerated().sorted { left, right in
                let (a, b) = (left.element.order, right.element.order)
                return a != b ? a < b : left.offset < right.offset
            }.map(\.element)
        }

        /// What `GET /v1/devices/{token}/notification-center` answers (docs/serve.md): the notifications shown,
        /// newest first, and the pending ones, soonest first, each with what the lock screen shows of it (never
        /// its payload), and the badge.
        public var json: JSON {
            func text(_ entry: Delivered) -> JSONObject {
                [
                    "identifier": .string(entry.identifier), "title": .string(entry.title),
                    "subtitle": .string(entry.subtitle), "body": .string(entry.body),
                    "thread_id": .string(entry.notification["aps"]?["thread-id"]?.stringValue ?? ""),
                ]
            }
            return [
                "delivered": .array(
                    delivered.reversed().map { entry in
                        var object = text(entry)
                        object["date"] = .int(entry.date)
                        object["local"] = .bool(entry.local != nil)
                        return .object(object)
                    }),
                "pending": .array(
                    pending.map { entry in
                        var object = text(entry.notification)
                        // Null for one that fires no more here (a repeating calendar trigger past its firings,
                        // or added without them).
                        object["fire_at"] = entry.nextFire.map(JSON.int) ?? .null
                        object["repeats"] = .bool(entry.repeats || !entry.fires)
                        return .object(object)
                    }),
                "badge": badge.map { .int(Int64($0)) } ?? .null,
            ]
        }

        private mutating func show(_ entry: Delivered) {
            delivered.removeAll { $0.identifier == entry.identifier }
            delivered.append(entry)
            if delivered.count > NotificationCenterLog.capacity {
                delivered.removeFirst(delivered.count - NotificationCenterLog.capacity)
            }
            if let badge = entry.notification["aps"]?["badge"]?.intValue { self.badge = Int(badge) }
        }
    }
}
