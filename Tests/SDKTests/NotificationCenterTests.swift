import Foundation
import NSEDevice
import NSEExtensionKit
import NSEJSON
import NSEPayload
import NSEProtocol
import Testing
import UserNotifications

/// `UNUserNotificationCenter` as an extension calls it: the device's delivered notifications, their removal, the badge.
@Suite(.serialized)
struct NotificationCenterTests {
    let device: Device

    init() throws {
        let directory = NSTemporaryDirectory() + "nse-center-\(UUID().uuidString)"
        device = try Device.create(at: directory)
        ExtensionHost.shared.serving(
            ServiceRequest(
                requestID: "r1", pushType: .alert, payload: JSONObject(), container: directory,
                budgetMilliseconds: 30_000, deadlineUnixMilliseconds: 0))
        for (identifier, body, date) in [("m1", "Lunch?", 1_800_000_000_000), ("m2", "At one", 1_800_000_060_000)] {
            try device.notificationCenter.deliver(
                NotificationCenterLog.Delivered(
                    identifier: identifier, date: Int64(date),
                    notification: [
                        "aps": ["alert": ["title": "Alice", "body": "(sealed)"], "thread-id": "alice", "badge": 2],
                        "message-id": .string(identifier),
                    ],
                    title: "Alice", subtitle: "", body: body))
        }
    }

    @Test("delivered notifications come newest first, with the content they were shown with and their userInfo")
    func delivered() async throws {
        let notifications = await UNUserNotificationCenter.current().deliveredNotifications()
        #expect(notifications.map(\.request.identifier) == ["m2", "m1"])
        let newest = try #require(notifications.first)
        #expect(newest.date == Date(timeIntervalSince1970: 1_800_000_060))
        #expect(newest.request.content.body == "At one" && newest.request.content.title == "Alice")
        #expect(newest.request.content.threadIdentifier == "alice")
        #expect(newest.request.content.userInfo["message-id"] as? String == "m2")
        #expect(newest.request.trigger is UNPushNotificationTrigger)

        let fromHandler = await withCheckedContinuation { continuation in
            UNUserNotificationCenter.current().getDeliveredNotifications { continuation.resume(returning: $0) }
        }
        #expect(fromHandler.map(\.request.identifier) == ["m2", "m1"])
    }

    @Test("removed by identifier, or all of them; the badge set, and a negative one refused")
    func removeAndBadge() async throws {
        let center = UNUserNotificationCenter.current()
        center.removeDeliveredNotifications(withIdentifiers: ["m1", "not-there"])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["m2"])
        try await center.setBadgeCount(5)
        #expect(try device.notificationCenter.state().badge == 5)
        await #expect(throws: UNError(.badgeInputInvalid)) { try await center.setBadgeCount(-1) }
        let error = await withCheckedContinuation { continuation in
            center.setBadgeCount(0) { continuation.resume(returning: $0 == nil) }
        }
        #expect(error)
        #expect(try device.notificationCenter.state().badge == 0)
        center.removeAllDeliveredNotifications()
        #expect(await center.deliveredNotifications().isEmpty)
    }
}
