public import Foundation

/// A notification the system delivered: when, and its request (identifier, content, trigger). Made by the system
/// only, as on iOS: ``UNUserNotificationCenter/getDeliveredNotifications(completionHandler:)`` lists them.
open class UNNotification: NSObject, NSCopying, @unchecked Sendable {
    open var date: Date { _date }
    open var request: UNNotificationRequest { _request }

    private let _date: Date
    private let _request: UNNotificationRequest

    init(date: Date, request: UNNotificationRequest) {
        _date = date
        _request = request
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}
