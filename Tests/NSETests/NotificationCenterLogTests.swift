import Foundation
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

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
}
