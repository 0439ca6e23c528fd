public import Foundation

/// What triggers a notification; a push's is a ``UNPushNotificationTrigger``, a local notification's a
/// ``UNTimeIntervalNotificationTrigger`` or a ``UNCalendarNotificationTrigger`` (`Triggers.swift`).
open class UNNotificationTrigger: NSObject, NSCopying, @unchecked Sendable {
    open var repeats: Bool { _repeats }

    private let _repeats: Bool

    init(repeats: Bool = false) {
        _repeats = repeats
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The trigger of a notification that came by APNs. Made by the system only, as on iOS.
open class UNPushNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {}

/// The request an extension is handed: the push's identifier, its content as iOS made it from the payload, and its
/// trigger.
open class UNNotificationRequest: NSObject, NSCopying, @unchecked Sendable {
    /// For a push, its `apns-collapse-id` when it has one, as on iOS; else the host's request id (the result's
    /// `request_id`), a new UUID each push.
    open var identifier: String { _identifier }
    open var content: UNNotificationContent { _content.copy() as! UNNotificationContent }
    open var trigger: UNNotificationTrigger? { _trigger }

    private let _identifier: String
    private let _content: UNNotificationContent
    private let _trigger: UNNotificationTrigger?

    public convenience init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.init(identifier: identifier, frozenContent: content.copy() as! UNNotificationContent, trigger: trigger)
    }

    init(identifier: String, frozenContent: UNNotificationContent, trigger: UNNotificationTrigger?) {
        _identifier = identifier
        _content = frozenContent
        _trigger = trigger
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}
