public import Foundation
import NSEJSON
import NSEProtocol

/// Fires a local notification after a time interval, once or every interval.
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    open var timeInterval: TimeInterval { _timeInterval }

    private let _timeInterval: TimeInterval
    /// When it was scheduled to fire first, for a request the system holds (pending); nil for one made by the app.
    private let firstFire: Date?

    /// As iOS, an interval of 0 or less, or under 60 s for one that repeats, is a programming error: the process
    /// stops with iOS's message (an `NSInternalInconsistencyException` there).
    public convenience init(timeInterval: TimeInterval, repeats: Bool) {
        self.init(timeInterval: timeInterval, repeats: repeats, firstFire: nil)
    }

    init(timeInterval: TimeInterval, repeats: Bool, firstFire: Date?) {
        if let problem = NotificationAddition.Trigger.intervalProblem(seconds: timeInterval, repeats: repeats) {
            fatalError(problem)
        }
        _timeInterval = timeInterval
        self.firstFire = firstFire
        super.init(repeats: repeats)
    }

    /// The next time it fires: for a pending request, its scheduled firing (the next one past now, for one that
    /// repeats); for one not added yet, now plus the interval.
    open func nextTriggerDate() -> Date? {
        let now = Date()
        guard let firstFire else { return now.addingTimeInterval(timeInterval) }
        guard repeats, firstFire <= now else { return firstFire }
        let passed = (now.timeIntervalSince(firstFire) / timeInterval).rounded(.down) + 1
        return firstFire.addingTimeInterval(passed * timeInterval)
    }
}

/// Fires a local notification at the dates matching some date components, once or at every match.
open class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    open var dateComponents: DateComponents { _dateComponents }

    private let _dateComponents: DateComponents

    public convenience init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.init(dateComponents: dateComponents, repeats: repeats)
    }

    init(dateComponents: DateComponents, repeats: Bool) {
        _dateComponents = dateComponents
        super.init(repeats: repeats)
    }

    /// The next date past now that matches, in the components' calendar and time zone (the current ones when they
    /// name none); nil when none does. A date that does not exist (February 30) moves to the next one that does, its
    /// time kept.
    open func nextTriggerDate() -> Date? {
        matcher()(Date())
    }

    /// The first date after a date that matches, the calendar and components made once for all the dates asked.
    private func matcher() -> (Date) -> Date? {
        var calendar = dateComponents.calendar ?? Calendar.current
        if let zone = dateComponents.timeZone { calendar.timeZone = zone }
        var components = dateComponents
        components.calendar = nil
        components.timeZone = nil
        return { [calendar, components] date in
            calendar.nextDate(after: date, matching: components, matchingPolicy: .nextTimePreservingSmallerComponents)
        }
    }

    /// The matches from `first` on, for the host to fire a repeating trigger at: at most `limit`, none later than
    /// `horizon` after the first.
    func matches(from first: Date, limit: Int, horizon: TimeInterval) -> [Date] {
        let match = matcher()
        var dates = [first]
        let end = first.addingTimeInterval(horizon)
        while dates.count < limit, let last = dates.last, let next = match(last), next > last, next <= end {
            dates.append(next)
        }
        return dates
    }
}

/// A trigger as the protocol carries it, and back.
enum TriggerEncoding {
    /// The components the protocol keeps, by their JSON names.
    private static let components: [(String, Calendar.Component)] = [
        ("era", .era), ("year", .year), ("month", .month), ("day", .day), ("hour", .hour), ("minute", .minute),
        ("second", .second), ("nanosecond", .nanosecond), ("weekday", .weekday), ("weekday_ordinal", .weekdayOrdinal),
        ("quarter", .quarter), ("week_of_month", .weekOfMonth), ("week_of_year", .weekOfYear),
        ("year_for_week_of_year", .yearForWeekOfYear),
    ]

    /// The trigger of a request being added, with its first firing; nil for a trigger that fires never (a calendar
    /// date already past, or matching no date): iOS refuses those (`UNError.notificationInvalidNoDate`).
    static func addition(_ trigger: UNNotificationTrigger) -> NotificationAddition.Trigger? {
        let repeats = trigger.repeats
        switch trigger {
        case let interval as UNTimeIntervalNotificationTrigger:
            guard let fire = interval.nextTriggerDate() else { return nil }
            return NotificationAddition.Trigger(
                kind: .timeInterval, repeats: repeats, fireAt: milliseconds(fire), seconds: interval.timeInterval)
        case let calendar as UNCalendarNotificationTrigger:
            guard let fire = calendar.nextTriggerDate() else { return nil }
            var object = JSONObject()
            for (name, component) in components {
                if let value = calendar.dateComponents.value(for: component), value != NSDateComponentUndefined {
                    object[name] = .int(Int64(value))
                }
            }
            if let zone = calendar.dateComponents.timeZone { object["time_zone"] = .string(zone.identifier) }
            // The host keeps no calendar: a repeating one's firings are worked out here, the horizon cut again in
            // the milliseconds the host checks it in.
            let first = milliseconds(fire)
            let horizon = NotificationAddition.Trigger.firingsHorizonMilliseconds
            let firings =
                repeats
                ? Array(
                    calendar.matches(
                        from: fire, limit: NotificationAddition.Trigger.maxFirings, horizon: Double(horizon) / 1000
                    ).map(milliseconds).prefix { $0 - first <= horizon })
                : nil
            return NotificationAddition.Trigger(
                kind: .calendar, repeats: repeats, fireAt: first, dateComponents: object, firings: firings)
        default:
            // A push trigger (or another made by the system) is not the app's to schedule.
            return nil
        }
    }

    /// The trigger a pending request was added with, from what Notification Center keeps.
    static func trigger(_ json: JSON?) -> UNNotificationTrigger? {
        guard let json, let trigger = try? NotificationAddition.Trigger(json: json) else { return nil }
        let firstFire = Date(timeIntervalSince1970: Double(trigger.fireAt) / 1000)
        switch trigger.kind {
        case .timeInterval:
            guard let seconds = trigger.seconds,
                NotificationAddition.Trigger.intervalProblem(seconds: seconds, repeats: trigger.repeats) == nil
            else { return nil }
            return UNTimeIntervalNotificationTrigger(
                timeInterval: seconds, repeats: trigger.repeats, firstFire: firstFire)
        case .calendar:
            var components = DateComponents()
            let object = trigger.dateComponents ?? [:]
            for (name, unit) in Self.components {
                if let value = object[name]?.intValue.flatMap({ Int(exactly: $0) }) {
                    components.setValue(value, for: unit)
                }
            }
            if let zone = object["time_zone"]?.stringValue { components.timeZone = TimeZone(identifier: zone) }
            return UNCalendarNotificationTrigger(dateComponents: components, repeats: trigger.repeats)
        }
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
