import Foundation
import NSEJSON
import NSESystem
import NSETestSupport
import Testing

@testable import NSEDevice

/// The device's Notification Center (`notification-center.jsonl`): what is shown and not removed, and the badge.
@Suite struct NotificationCenterLogTests {
    let device: Device

    init() throws {
        device = try Device.create(at: try TestSupport.temporaryDirectory("nse-center") + "/bob")
    }

    private func shown(_ identifier: String, body: String = "Hello", badge: Int? = nil, padding: Int = 0)
        -> NotificationCenterLog.Delivered
    {
        var aps: JSONObject = ["alert": ["title": "Alice", "body": .string(body)]]
        if let badge { aps["badge"] = .int(Int64(badge)) }
        return NotificationCenterLog.Delivered(
            identifier: identifier, date: 1_800_000_000_000,
            notification: ["aps": .object(aps), "pad": .string(String(repeating: "x", count: padding))],
            title: "Alice", subtitle: "", body: body)
    }

    @Test func shownReplacedRemovedAndTheBadge() throws {
        let center = device.notificationCenter
        #expect(try center.state() == NotificationCenterLog.State())
        try center.deliver(shown("a", badge: 1))
        try center.deliver(shown("b", badge: 2))
        try center.deliver(shown("a", body: "Edited"))  // the same identifier: replaced, now the newest
        var state = try center.state()
        #expect(state.delivered.map(\.identifier) == ["b", "a"])
        #expect(state.delivered.last?.body == "Edited")
        #expect(state.badge == 2)
        try center.remove(identifiers: ["b", "unknown"])
        try center.setBadge(0)
        state = try center.state()
        #expect(state.delivered.map(\.identifier) == ["a"] && state.badge == 0)
        try center.removeAll()
        #expect(try center.state().delivered.isEmpty)
        // What `nse device show` says of it.
        #expect(device.summary()["notification_center"]?["badge"]?.intValue == 0)
    }

    @Test func aLineCutShortByACrashIsSkipped() throws {
        let center = device.notificationCenter
        try center.deliver(shown("a"))
        let handle = try #require(FileHandle(forWritingAtPath: center.path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"deliver":{"identifier":"b","da"#.utf8))
        try handle.close()
        #expect(try center.state().delivered.map(\.identifier) == ["a"])
    }

    @Test func theLogIsRewrittenAsItsStateWhenItGrows() throws {
        let center = device.notificationCenter
        try center.setBadge(7)
        // 40 notifications of ~30 KB: past the threshold, the log keeps the newest that fit in half of it.
        for index in 0..<40 { try center.deliver(shown("n\(index)", padding: 30_000)) }
        try center.remove(identifiers: ["n39"])
        let size = try #require(FileManager.default.attributesOfItem(atPath: center.path)[.size] as? Int)
        #expect(size <= NotificationCenterLog.compactionBytes)
        let state = try center.state()
        #expect(state.badge == 7)
        #expect(state.delivered.last?.identifier == "n38")
        #expect(state.delivered.count < 39 && state.delivered.count >= 10)
        #expect(
            state.delivered.map(\.identifier)
                == state.delivered.indices.map { "n\(38 - state.delivered.count + 1 + $0)" })
    }

    @Test func atMostTheNewest256AreKept() throws {
        let center = device.notificationCenter
        for index in 0..<300 { try center.deliver(shown("n\(index)")) }
        let state = try center.state()
        #expect(state.delivered.count == NotificationCenterLog.capacity)
        #expect(state.delivered.first?.identifier == "n44" && state.delivered.last?.identifier == "n299")
    }

    private func scheduled(
        _ identifier: String, at fire: Int64, every: Int64? = nil, firings: [Int64]? = nil, fires: Bool = true
    ) -> NotificationCenterLog.Scheduled {
        var notification = shown(identifier, body: "Reminder")
        notification.date = fire
        notification.local = ["trigger": ["type": "time-interval", "seconds": 60, "fire_at": .int(fire)]]
        return NotificationCenterLog.Scheduled(notification: notification, every: every, firings: firings, fires: fires)
    }

    /// A local notification scheduled for later is pending until its time, then shown at its time; one with the
    /// identifier of a pending one replaces it; pending ones can be cancelled.
    @Test func scheduledNotificationsArePendingThenShown() throws {
        let center = device.notificationCenter
        let now = SystemClock.unixMilliseconds()
        try center.schedule(scheduled("later", at: now + 3_600_000))
        try center.schedule(scheduled("soon", at: now + 60_000))
        try center.schedule(scheduled("gone", at: now + 120_000))
        try center.removePending(identifiers: ["gone"])
        var state = try center.state()
        #expect(state.pending.map(\.identifier) == ["soon", "later"] && state.delivered.isEmpty)
        // Read a minute and a half later: "soon" has fired, at its own time.
        state = try center.state(now: now + 90_000)
        #expect(state.pending.map(\.identifier) == ["later"])
        #expect(state.delivered.map(\.identifier) == ["soon"] && state.delivered.first?.date == now + 60_000)
        #expect(state.delivered.first?.local?["trigger"]?["type"] == "time-interval")
        try center.schedule(scheduled("later", at: now + 7_200_000))  // replaced, not added
        #expect(try center.state().pending.map { $0.notification.date } == [now + 60_000, now + 7_200_000])
        try center.removeAllPending()
        #expect(try center.state(now: now + 10_000_000).pending.isEmpty)
        #expect(device.summary()["notification_center"]?["pending"] == [])
    }

    /// What fired before a removal was written is removed by it; a repeating trigger shows its latest firing and
    /// stays pending; a repeating calendar trigger is kept, never fired.
    @Test func firingsFollowTheOrderOfTheLog() throws {
        // Written by hand, each line with its time: a reminder due at 1,000, removed at 2,000.
        let lines: [JSON] = [
            ["schedule": scheduled("once", at: 1_000).json, "at": 500],
            ["schedule": scheduled("hourly", at: 1_000, every: 3_600_000).json, "at": 500],
            ["schedule": scheduled("daily-9am", at: 1_000, fires: false).json, "at": 500],
            ["remove": ["once", "hourly"], "at": 2_000],
        ]
        try TestSupport.write(
            lines.map { $0.serialized() }.joined(separator: "\n") + "\n", to: device.notificationCenter.path)
        var state = try device.notificationCenter.state(now: 3_000)
        #expect(state.delivered.isEmpty, "\(state.delivered)")
        #expect(state.pending.map(\.identifier) == ["daily-9am", "hourly"])
        // Two hours and a bit later: the hourly one's second firing is shown (once), the calendar one still pending.
        state = try device.notificationCenter.state(now: 1_000 + 2 * 3_600_000 + 5)
        #expect(state.delivered.map(\.identifier) == ["hourly"])
        #expect(state.delivered.first?.date == Int64(7_201_000))
        #expect(state.pending.map(\.identifier) == ["daily-9am", "hourly"])
        #expect(state.pending.last?.nextFire == Int64(10_801_000))
    }

    /// A repeating calendar trigger fires at the firings the framework worked out: its latest one due is shown (once),
    /// it stays pending with its next, and past its last it stays pending without one, as one added without them.
    @Test func aRepeatingCalendarTriggerFiresAtItsFirings() throws {
        let day: Int64 = 86_400_000
        // Daily at 9:00 in some zone, with the hour DST takes off between the second and the third.
        let firings = [1_000, 1_000 + day, 1_000 + 2 * day - 3_600_000, 1_000 + 3 * day - 3_600_000]
        let lines: [JSON] = [
            ["schedule": scheduled("daily", at: 1_000, firings: firings).json, "at": 500],
            ["schedule": scheduled("never", at: 1_000, fires: false).json, "at": 500],
        ]
        try TestSupport.write(
            lines.map { $0.serialized() }.joined(separator: "\n") + "\n", to: device.notificationCenter.path)
        var state = try device.notificationCenter.state(now: 999)
        // Both at 1,000: in the order they came.
        #expect(state.delivered.isEmpty && state.pending.map(\.identifier) == ["daily", "never"])
        #expect(state.pending.first?.nextFire == 1_000 && state.pending.last?.nextFire == nil)
        // Read on the third day, after its third firing: that one is shown, at its own time.
        state = try device.notificationCenter.state(now: firings[2] + 60_000)
        #expect(state.delivered.map(\.identifier) == ["daily"] && state.delivered.first?.date == firings[2])
        #expect(state.pending.map(\.identifier) == ["never", "daily"] && state.pending.last?.nextFire == firings[3])
        let listed = state.json["pending"]?.arrayValue?.last
        #expect(listed?["fire_at"] == .int(firings[3]) && listed?["repeats"] == true)
        // Past its last: shown once more, then pending with nothing to fire at.
        state = try device.notificationCenter.state(now: firings[3] + 10 * day)
        #expect(state.delivered.map(\.date) == [firings[3]])
        #expect(state.pending.map(\.identifier) == ["never", "daily"] && state.pending.last?.nextFire == nil)
        #expect(state.json["pending"]?.arrayValue?.map { $0["fire_at"] } == [.null, .null])
        // A log written by hand may hold any numbers: one whose next firing is past Int64 fires no more.
        var far = scheduled("far", at: 1_000, every: .max)
        far.fired = 1_000
        try device.notificationCenter.schedule(far)
        #expect(try device.notificationCenter.state(now: .max).pending.contains { $0.identifier == "far" })
        // Firings out of order are not a trigger's: the line is skipped.
        let bad = scheduled("bad", at: 1_000, firings: [1_000, 900])
        try device.notificationCenter.schedule(bad)
        #expect(try !device.notificationCenter.state().pending.contains { $0.identifier == "bad" })
    }

    /// Apple: the system keeps the soonest-firing 64 an app scheduled; the log rewritten keeps every pending one,
    /// a repeating one's interval and last firing too, and the notifications that fit beside them.
    @Test func atMost64ArePendingAndCompactionKeepsThem() throws {
        let center = device.notificationCenter
        let now = SystemClock.unixMilliseconds()
        try center.schedule(scheduled("hourly", at: now - 90 * 60_000, every: 3_600_000))
        for index in 0..<70 {
            try center.schedule(scheduled("p\(index)", at: now + 3_600_000 + Int64(70 - index) * 1000))
        }
        let state = try center.state()
        #expect(state.pending.count == NotificationCenterLog.pendingCapacity)
        #expect(state.pending.first?.identifier == "hourly" && state.pending.last?.identifier == "p7")
        #expect(state.pending.first?.fired == now - 30 * 60_000)
        for index in 0..<40 { try center.deliver(shown("n\(index)", padding: 30_000)) }
        // Rewritten: well under the threshold again, with what was pending as it was.
        let size = try #require(FileManager.default.attributesOfItem(atPath: center.path)[.size] as? Int)
        #expect(size < NotificationCenterLog.compactionBytes * 3 / 4, "\(size)")
        let after = try center.state()
        #expect(after.pending == state.pending)
        #expect(after.delivered.last?.identifier == "n39" && after.delivered.count >= 10)
    }

    /// A local notification added without a trigger replaces a pending request with its identifier, as a request
    /// added again does on iOS; a push with that identifier (a collapse id) leaves the pending one alone.
    @Test func anImmediateLocalNotificationReplacesAPendingOne() throws {
        let center = device.notificationCenter
        let later = SystemClock.unixMilliseconds() + 3_600_000
        try center.schedule(scheduled("reminder", at: later))
        try center.schedule(scheduled("other", at: later))
        try center.deliver(shown("other"))  // a push
        var now = shown("reminder")
        now.local = [:]
        try center.deliver(now)
        let state = try center.state()
        #expect(state.pending.map(\.identifier) == ["other"])
        #expect(state.delivered.map(\.identifier) == ["other", "reminder"])
    }
}
