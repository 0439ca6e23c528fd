import Foundation
import NSEDevice
import NSEExtensionKit
import NSEJSON
import NSEPayload
import NSEProtocol
import Testing

@testable import UserNotifications

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

    /// Pending local notifications as the app reads them back: its trigger made again, with the date it fires next.
    @Test("pending requests come back with their triggers, soonest first, and can be cancelled")
    func pending() async throws {
        let now = Date()
        let inAnHour = Int64((now.timeIntervalSince1970 + 3600) * 1000)
        for (identifier, local, fire) in [
            (
                "hourly",
                ["trigger": ["type": "time-interval", "seconds": 3600, "repeats": true, "fire_at": .int(inAnHour)]],
                inAnHour
            ),
            (
                "morning",
                [
                    "trigger": [
                        "type": "calendar", "repeats": false, "fire_at": .int(inAnHour + 60_000),
                        "date_components": ["hour": 9, "minute": 30],
                    ]
                ], inAnHour + 60_000
            ),
        ] as [(String, JSONObject, Int64)] {
            try device.notificationCenter.schedule(
                NotificationCenterLog.Scheduled(
                    notification: NotificationCenterLog.Delivered(
                        identifier: identifier, date: fire, notification: ["aps": ["alert": "Reminder"], "k": "v"],
                        title: "", subtitle: "", body: "Reminder", local: local),
                    every: identifier == "hourly" ? 3_600_000 : nil))
        }
        let center = UNUserNotificationCenter.current()
        let requests = await center.pendingNotificationRequests()
        #expect(requests.map(\.identifier) == ["hourly", "morning"])
        let hourly = try #require(requests.first?.trigger as? UNTimeIntervalNotificationTrigger)
        #expect(hourly.repeats && hourly.timeInterval == 3600)
        let next = try #require(hourly.nextTriggerDate())
        #expect(abs(next.timeIntervalSince(now) - 3600) < 2)
        // A repeating one whose first firing has passed: the next is an interval after the last.
        let started = UNTimeIntervalNotificationTrigger(
            timeInterval: 3600, repeats: true, firstFire: now.addingTimeInterval(-5400))
        let again = try #require(started.nextTriggerDate())
        #expect(abs(again.timeIntervalSince(now) - 1800) < 2)
        let once = UNTimeIntervalNotificationTrigger(
            timeInterval: 60, repeats: false, firstFire: now.addingTimeInterval(-5))
        #expect(once.nextTriggerDate() == now.addingTimeInterval(-5))
        let morning = try #require(requests.last?.trigger as? UNCalendarNotificationTrigger)
        #expect(!morning.repeats && morning.dateComponents.hour == 9 && morning.dateComponents.minute == 30)
        #expect(requests.last?.content.body == "Reminder" && requests.last?.content.userInfo["k"] as? String == "v")
        center.removePendingNotificationRequests(withIdentifiers: ["hourly"])
        let fromHandler = await withCheckedContinuation { continuation in
            center.getPendingNotificationRequests { continuation.resume(returning: $0.map(\.identifier)) }
        }
        #expect(fromHandler == ["morning"])
        center.removeAllPendingNotificationRequests()
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("a trigger's next date: a time interval from now, a calendar's next match, none for a date gone by")
    func triggers() async throws {
        let interval = UNTimeIntervalNotificationTrigger(timeInterval: 90, repeats: false)
        #expect(!interval.repeats && abs((interval.nextTriggerDate()?.timeIntervalSinceNow ?? 0) - 90) < 2)
        var components = DateComponents()
        components.minute = 15
        let hourly = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        let next = try #require(hourly.nextTriggerDate())
        #expect(next > Date() && next.timeIntervalSinceNow <= 3600)
        #expect(Calendar.current.component(.minute, from: next) == 15)
        let past = UNCalendarNotificationTrigger(
            dateMatching: DateComponents(year: 2001, month: 1, day: 1, hour: 9), repeats: false)
        #expect(past.nextTriggerDate() == nil)
        // Added, it is refused: no date to fire at. (The process has no host: one it could reach says more.)
        let content = UNMutableNotificationContent()
        content.body = "Happy new year"
        let center = UNUserNotificationCenter.current()
        await #expect(throws: UNError(.notificationInvalidNoDate)) {
            try await center.add(UNNotificationRequest(identifier: "ny", content: content, trigger: past))
        }
        await #expect(throws: UNError(.notificationsNotAllowed)) {
            try await center.add(UNNotificationRequest(identifier: "now", content: content, trigger: nil))
        }
    }

    @Test("a repeating calendar trigger is added with its firings, worked out in its calendar and time zone")
    func repeatingCalendarFirings() throws {
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        var components = DateComponents(hour: 9, minute: 30)
        components.timeZone = paris
        let daily = try #require(
            TriggerEncoding.addition(UNCalendarNotificationTrigger(dateMatching: components, repeats: true)))
        let firings = try #require(daily.firings)
        // Every day for 400 days, at 9:30 in Paris through both changes of its clocks.
        #expect(firings.first == daily.fireAt && (400...401).contains(firings.count), "\(firings.count)")
        #expect(NotificationAddition.Trigger.firingsAreValid(firings, first: daily.fireAt))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = paris
        for time in firings {
            let local = calendar.dateComponents(
                [.hour, .minute], from: Date(timeIntervalSince1970: Double(time) / 1000))
            #expect(local.hour == 9 && local.minute == 30, "\(time)")
        }
        let gaps = Set(zip(firings, firings.dropFirst()).map { ($1 - $0) / 3_600_000 })
        #expect(gaps == [23, 24, 25], "\(gaps)")
        // Each hour on the hour: capped at the most a trigger carries.
        let hourly = try #require(
            TriggerEncoding.addition(
                UNCalendarNotificationTrigger(dateMatching: DateComponents(minute: 0), repeats: true)))
        #expect(hourly.firings?.count == NotificationAddition.Trigger.maxFirings)
        // Once: no firings, as a time interval.
        let once = TriggerEncoding.addition(UNCalendarNotificationTrigger(dateMatching: components, repeats: false))
        #expect(once?.firings == nil && once?.kind == .calendar)
        #expect(
            TriggerEncoding.addition(UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true))?.firings == nil
        )
    }

    @Test("the app's notification settings: authorized, Show Previews and what the entitlements allow, the device's")
    func settings() async throws {
        let center = UNUserNotificationCenter.current()
        var settings = await center.notificationSettings()
        #expect(settings.authorizationStatus == .authorized && settings.alertSetting == .enabled)
        #expect(settings.showPreviewsSetting == .whenAuthenticated && settings.showPreviewsSetting.rawValue == 1)
        #expect(settings.criticalAlertSetting == .notSupported && settings.directMessagesSetting == .notSupported)
        var changed = device
        changed.config.showPreviews = .never
        changed.config.communication = true
        try changed.save()
        ExtensionHost.shared.serving(
            ServiceRequest(
                requestID: "r2", pushType: .alert, payload: JSONObject(), container: device.directory,
                budgetMilliseconds: 30_000, deadlineUnixMilliseconds: 0))
        settings = await withCheckedContinuation { continuation in
            center.getNotificationSettings { continuation.resume(returning: $0) }
        }
        #expect(settings.showPreviewsSetting == .never && settings.directMessagesSetting == .enabled)
        #expect(settings.alertStyle == .banner && settings.scheduledDeliverySetting == .disabled)
    }
}
