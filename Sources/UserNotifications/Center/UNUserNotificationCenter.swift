public import Foundation
import NSEDevice
import NSEExtensionKit
import NSEPayload

/// The app's notification center as an extension uses it: the notifications in Notification Center, their removal,
/// and the app icon's badge (docs/sdk.md). They are the device's (`DIR/notification-center.jsonl`): the host adds
/// each notification it shows, so a later push's extension finds the earlier ones, as on an iPhone.
///
/// The app's side (authorization, categories, the delegate, scheduling local notifications) is not declared.
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    private static let shared = UNUserNotificationCenter()

    /// The app's notification center.
    open class func current() -> UNUserNotificationCenter { shared }

    override init() { super.init() }

    /// The app's notifications still in Notification Center, newest first (as it lists them), each with the content
    /// it was shown with. The handler runs on a background queue, as on iOS.
    open func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        let notifications = Self.delivered()
        DispatchQueue.global().async { completionHandler(notifications) }
    }

    open func deliveredNotifications() async -> [UNNotification] {
        Self.delivered()
    }

    /// Removes these notifications from Notification Center (identifiers not there are ignored).
    open func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        Self.change { center throws(DeviceError) in try center.remove(identifiers: identifiers) }
    }

    open func removeAllDeliveredNotifications() {
        Self.change { center throws(DeviceError) in try center.removeAll() }
    }

    /// Sets the app icon's badge (iOS 16); 0 removes it. A negative count is `UNError.badgeInputInvalid`.
    open func setBadgeCount(
        _ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        let error = Self.setBadge(newBadgeCount)
        guard let completionHandler else { return }
        DispatchQueue.global().async { completionHandler(error) }
    }

    open func setBadgeCount(_ newBadgeCount: Int) async throws {
        if let error = Self.setBadge(newBadgeCount) { throw error }
    }

    private static func setBadge(_ count: Int) -> (any Error)? {
        guard count >= 0 else { return UNError(.badgeInputInvalid) }
        guard let device = ExtensionHost.shared.device else { return nil }
        do { try device.notificationCenter.setBadge(count) } catch {
            return NSError(domain: UNErrorDomain, code: 1, userInfo: [NSLocalizedDescriptionKey: error.description])
        }
        return nil
    }

    /// The device's notifications, as the SDK's objects. Without a device (no request yet), none.
    private static func delivered() -> [UNNotification] {
        guard let device = ExtensionHost.shared.device else { return [] }
        let state: NotificationCenterLog.State
        do { state = try device.notificationCenter.state() } catch {
            FileHandle.standardError.write(Data("UNUserNotificationCenter: \(error.description)\n".utf8))
            return []
        }
        return state.delivered.reversed().map { entry in
            // The alert's text is what was shown, kept with it: no strings to render it from again.
            var storage = RequestDecoding.content(entry.notification, strings: StringsTable())
            storage.title = entry.title
            storage.subtitle = entry.subtitle
            storage.body = entry.body
            let request = UNNotificationRequest(
                identifier: entry.identifier, frozenContent: UNNotificationContent(storage: storage),
                trigger: UNPushNotificationTrigger())
            return UNNotification(date: Date(timeIntervalSince1970: Double(entry.date) / 1000), request: request)
        }
    }

    private static func change(_ body: (NotificationCenterLog) throws(DeviceError) -> Void) {
        guard let device = ExtensionHost.shared.device else { return }
        do { try body(device.notificationCenter) } catch {
            FileHandle.standardError.write(Data("UNUserNotificationCenter: \(error.description)\n".utf8))
        }
    }
}
