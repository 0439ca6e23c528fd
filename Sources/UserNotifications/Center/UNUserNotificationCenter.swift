public import Foundation
import NSEDevice
import NSEExtensionKit
import NSEJSON
import NSEPayload
import NSEProtocol

/// The app's notification center as an extension uses it: the notifications in Notification Center, their removal,
/// the app icon's badge, and local notifications added now or for later (docs/sdk.md). They are the device's
/// (`DIR/notification-center.jsonl`): the host adds each notification it shows, so a later push's extension finds
/// the earlier ones, as on an iPhone.
///
/// The app's side (asking for authorization, categories, the delegate) is not declared.
open class UNUserNotificationCenter: NSObject, @unchecked Sendable {
    private static let shared = UNUserNotificationCenter()

    /// The app's notification center.
    open class func current() -> UNUserNotificationCenter { shared }

    override init() { super.init() }

    /// The app's notification settings (``UNNotificationSettings``), the device's as the push found it. The handler
    /// runs on a background queue, as on iOS.
    // @preconcurrency, as Swift imports Apple's Objective-C: the handler's @Sendable binds in Swift 6 mode only.
    @preconcurrency
    open func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        let settings = UNNotificationSettings(ExtensionHost.shared.device?.config)
        DispatchQueue.global().async { completionHandler(settings) }
    }

    open func notificationSettings() async -> UNNotificationSettings {
        UNNotificationSettings(ExtensionHost.shared.device?.config)
    }

    /// The app's notifications still in Notification Center, newest first (as it lists them), each with the content
    /// it was shown with. The handler runs on a background queue, as on iOS.
    @preconcurrency
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
    @preconcurrency
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

    /// Adds a local notification: shown at once without a trigger, else when its trigger fires (a request with the
    /// identifier of a pending one replaces it). The handler gets nil once the system has it, or a `UNError`:
    /// `notificationInvalidNoContent` for a content with no title, subtitle or body, `notificationInvalidNoDate`
    /// for a calendar trigger matching no date to come. It runs on a background queue, as on iOS.
    @preconcurrency
    open func add(
        _ request: UNNotificationRequest,
        withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        Self.add(request) { error in
            guard let completionHandler else { return }
            DispatchQueue.global().async { completionHandler(error) }
        }
    }

    open func add(_ request: UNNotificationRequest) async throws {
        let error = await withCheckedContinuation { continuation in
            Self.add(request) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    /// The local notifications waiting for their trigger, soonest first. The handler runs on a background queue.
    @preconcurrency
    open func getPendingNotificationRequests(
        completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void
    ) {
        let requests = Self.pending()
        DispatchQueue.global().async { completionHandler(requests) }
    }

    open func pendingNotificationRequests() async -> [UNNotificationRequest] {
        Self.pending()
    }

    /// Cancels these pending local notifications (identifiers not pending are ignored).
    open func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        Self.change { center throws(DeviceError) in try center.removePending(identifiers: identifiers) }
    }

    open func removeAllPendingNotificationRequests() {
        Self.change { center throws(DeviceError) in try center.removeAllPending() }
    }

    /// Replaces the app's categories with these (the system keeps one set per app; an empty set removes them).
    open func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        guard let device = ExtensionHost.shared.device else { return }
        // By identifier, then by content: two categories with one identifier keep the same one whatever the set's
        // order (the last of the ordered list wins).
        let encoded = categories.map(CategoryEncoding.json).sorted { lhs, rhs in
            let (left, right) = (lhs["identifier"]?.stringValue ?? "", rhs["identifier"]?.stringValue ?? "")
            return left != right ? left < right : JSON.object(lhs).serialized() < JSON.object(rhs).serialized()
        }
        do { try device.notificationCategories.replace(with: encoded) } catch {
            Self.log(error.description)
        }
    }

    /// The app's categories as the system has them. The handler runs on a background queue.
    @preconcurrency
    open func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void) {
        let categories = Self.categories()
        DispatchQueue.global().async { completionHandler(categories) }
    }

    open func notificationCategories() async -> Set<UNNotificationCategory> {
        Self.categories()
    }

    /// The app's answer as the device has it: authorized (the device shows its pushes), so `granted` is true and no
    /// prompt is shown, as iOS answers an app that asked before; what an entitlement allows is in the settings.
    @preconcurrency
    open func requestAuthorization(
        options: UNAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        let granted = Self.authorized()
        DispatchQueue.global().async { completionHandler(granted, nil) }
    }

    open func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        Self.authorized()
    }

    /// Whether the device shows Notification Content extensions: iPhones do.
    open var supportsContentExtensions: Bool { true }

    private static func authorized() -> Bool {
        UNNotificationSettings(ExtensionHost.shared.device?.config).authorizationStatus == .authorized
    }

    /// A line on the extension's stderr (the result keeps it): what the system would log, never content.
    private static func log(_ message: String) {
        FileHandle.standardError.write(Data("UNUserNotificationCenter: \(message)\n".utf8))
    }

    private static func categories() -> Set<UNNotificationCategory> {
        guard let device = ExtensionHost.shared.device else { return [] }
        do { return Set(try device.notificationCategories.categories().compactMap(CategoryEncoding.category)) } catch {
            Self.log(error.description)
            return []
        }
    }

    private static func add(_ request: UNNotificationRequest, completion: @escaping @Sendable ((any Error)?) -> Void) {
        var trigger: NotificationAddition.Trigger?
        if let requested = request.trigger {
            guard let made = TriggerEncoding.addition(requested) else {
                return completion(UNError(.notificationInvalidNoDate))
            }
            trigger = made
        }
        let content = request.content
        if !content.attachments.isEmpty {
            Self.log("a local notification's attachments are not shown (docs/sdk.md)")
        }
        // Without the communication's sender and avatars: the lock screen shows a local notification's own text.
        let delivered = ContentEncoding.delivered(content, scratch: nil)
        let addition = NotificationAddition(
            identifier: request.identifier, content: delivered.content, trigger: trigger)
        ExtensionHost.shared.addNotification(addition) { error in
            completion(error.map { UNError(UNError.Code(rawValue: $0.rawValue) ?? .notificationsNotAllowed) })
        }
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
            Self.log(error.description)
            return []
        }
        return state.delivered.reversed().map { entry in
            UNNotification(date: Date(timeIntervalSince1970: Double(entry.date) / 1000), request: request(entry))
        }
    }

    /// The device's pending local notifications, as the SDK's requests.
    private static func pending() -> [UNNotificationRequest] {
        guard let device = ExtensionHost.shared.device else { return [] }
        do { return try device.notificationCenter.state().pending.map { request($0.notification) } } catch {
            Self.log(error.description)
            return []
        }
    }

    /// A notification Notification Center keeps, as its request: the content with the text the lock screen shows
    /// (kept with it: no strings to render it from again), and its trigger (a push's, none, or the app's).
    private static func request(_ entry: NotificationCenterLog.Delivered) -> UNNotificationRequest {
        var storage = RequestDecoding.content(entry.notification, strings: StringsTable())
        storage.title = entry.title
        storage.subtitle = entry.subtitle
        storage.body = entry.body
        let trigger: UNNotificationTrigger? =
            entry.local.map { TriggerEncoding.trigger($0["trigger"]) } ?? UNPushNotificationTrigger()
        return UNNotificationRequest(
            identifier: entry.identifier, frozenContent: UNNotificationContent(storage: storage), trigger: trigger)
    }

    private static func change(_ body: (NotificationCenterLog) throws(DeviceError) -> Void) {
        guard let device = ExtensionHost.shared.device else { return }
        do { try body(device.notificationCenter) } catch {
            Self.log(error.description)
        }
    }
}
