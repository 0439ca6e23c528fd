import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NSEDevice
import NSEJSON
import Testing

@testable import NSEAPNsServer

/// `GET /`, the lock-screen page, through the router (the browser test is scripts/browser-lockscreen.py): the
/// served phone and its notifications rendered by the server, and whatever a push carries escaped.
@Suite struct LockScreenPageTests {
    @Test func thePageDrawsThePhoneAndEscapesWhatPushesCarry() async throws {
        let fixture = try ServerFixture()
        let hostile = #"<img src=x onerror=alert(1)> & "quotes""#
        try await fixture.app.test(.router) { client async throws in
            let pushed = try await client.execute(
                uri: "/3/device/\(fixture.remote)", method: .post,
                headers: fields([("apns-topic", "org.example.app"), ("apns-push-type", "alert")]),
                body: ByteBuffer(
                    string: JSON.object(["aps": ["alert": ["title": "Hi", "body": .string(hostile)], "badge": 3]])
                        .serialized())
            ) { $0.status.code }
            #expect(pushed == 200)
        }
        try await fixture.settle()
        try await fixture.app.test(.router) { client async throws in
            let (status, type, html) = try await client.execute(uri: "/", method: .get) { response in
                (
                    response.status.code, response.headers[.contentType] ?? "",
                    String(buffer: response.body)
                )
            }
            #expect(status == 200 && type.hasPrefix("text/html"))
            #expect(html.contains(#"data-remote="\#(fixture.remote.lowercased())""#))
            #expect(html.contains(#"<span class="bundle">org.example.app</span>"#))
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;"))
            #expect(!html.contains("<img src=x"))
            #expect(html.contains(#"<span class="badge">3</span>"#))
            #expect(html.contains("<details><summary>details</summary>"))
            #expect(html.contains("new EventSource(\"/v1/events\")"))
            // The page never carries the device's private key.
            let key = try String(contentsOfFile: fixture.device.secretKeyPath, encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!html.contains(key))
        }
    }

    /// `GET /v1/devices/{token}/notification-center`: what the device's Notification Center shows after a push, and
    /// after the app's extension removed it; the page then marks the push's card. An unknown token is refused.
    @Test func notificationCenterIsReadAndThePageFollowsIt() async throws {
        let fixture = try ServerFixture()
        try await fixture.app.test(.router) { client async throws in
            let pushed = try await client.execute(
                uri: "/3/device/\(fixture.remote)", method: .post,
                headers: fields([("apns-topic", "org.example.app"), ("apns-push-type", "alert")]),
                body: ByteBuffer(string: #"{"aps":{"alert":{"title":"Hi","body":"there"},"badge":2}}"#)
            ) { $0.status.code }
            #expect(pushed == 200)
        }
        try await fixture.settle()
        func center(_ token: String) async throws -> (Int, JSON?) {
            try await fixture.app.test(.router) { client async throws in
                try await client.execute(uri: "/v1/devices/\(token)/notification-center", method: .get) { response in
                    (Int(response.status.code), try? JSON.parse(Array(String(buffer: response.body).utf8)))
                }
            }
        }
        let (status, shown) = try await center(fixture.remote)
        #expect(status == 200)
        let delivered = shown?["delivered"]?.arrayValue ?? []
        #expect(delivered.count == 1 && delivered.first?["body"] == "there", "\(String(describing: shown))")
        #expect(delivered.first?["local"] == false && shown?["pending"] == [] && shown?["badge"] == 2)
        let identifier = try #require(delivered.first?["identifier"]?.stringValue)

        try fixture.device.notificationCenter.remove(identifiers: [identifier])
        #expect(try await center(fixture.remote).1?["delivered"] == [])
        let html = try await fixture.app.test(.router) { client async throws in
            try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
        }
        #expect(html.contains(#"data-nc="\#(identifier)""#) && html.contains("removed from Notification Center"))
        #expect(html.contains(#"<span class="app-badge">2</span>"#))
        #expect(try await center(String(repeating: "ab", count: 32)).0 == 400)
    }

    /// A push that brought a call: the call screen with the caller and the kind of call, and its steps and end in the
    /// detail panel; a thread's notifications in one stack, the newest on top.
    @Test func aCallAndAThreadAreDrawnAsIOSShowsThem() {
        let call: JSON = [
            "outcome": "suppressed", "apns_id": "a1", "recorded_at": 3_600_000,
            "call_report": ["localized_caller_name": "Dave", "has_video": false, "remote_handle": ["value": "dave"]],
            "call": ["timeline_ms": ["reported": 12, "invite_received": 80], "end_reason": "remoteEnded"],
        ]
        let html = LockScreenPage.card(call, appName: "org.example.app")
        #expect(html.contains(#"<span class="call-kind">Audio call</span><span class="caller">Dave</span>"#))
        #expect(html.contains(#"<span class="end-reason">ended: remoteEnded</span>"#))
        #expect(html.contains("<dt>call reported</dt><dd>12 ms</dd>"))
        #expect(html.contains("<dt>call invite received</dt><dd>80 ms</dd>"))
        #expect(html.contains("silenced by the extension <time>01:00:00</time>"))
        func message(_ id: String, thread: String?) -> JSON {
            var aps: JSONObject = ["alert": "x"]
            if let thread { aps["thread-id"] = .string(thread) }
            return [
                "outcome": "rewritten", "apns_id": .string(id), "notification": ["aps": .object(aps)],
                "display": ["title": "Carol", "body": .string(id)],
            ]
        }
        let groups = LockScreenPage.threads([
            message("m4", thread: "carol"), message("m3", thread: nil), message("m2", thread: "carol"),
            message("m1", thread: "erin"),
        ])
        #expect(groups.map { $0.compactMap { $0["apns_id"]?.stringValue } } == [["m4", "m2"], ["m3"], ["m1"]])
        let stack = LockScreenPage.stack(groups[0], appName: "org.example.app")
        #expect(stack.hasPrefix(#"<li class="stack" data-thread="carol"><ol class="stack-top"><li class="card"#))
        #expect(stack.contains("<summary>1 more</summary>"))
        #expect(stack.firstRange(of: "m4")!.lowerBound < stack.firstRange(of: "m2")!.lowerBound)
    }

    /// Local notifications an extension showed are cards of their own, under the push's; a card Notification Center
    /// no longer has is marked: removed (by the app's extension), or replaced by a newer one with its identifier.
    @Test func localNotificationsAndWhatNotificationCenterNoLongerShows() throws {
        let results: [JSON] = [
            [
                "outcome": "suppressed", "apns_id": "p3", "request_id": "r3", "recorded_at": 3_000, "display": .null,
                "local_notifications": [
                    [
                        "identifier": "m1", "shown": true, "thread_id": "alice",
                        "display": ["title": "Alice", "subtitle": "", "body": "Lunch?"],
                    ],
                    [
                        "identifier": "reminder", "shown": false,
                        "display": ["title": "", "subtitle": "", "body": "1 new"],
                    ],
                    ["identifier": "m2", "shown": true, "display": ["title": "Bob", "subtitle": "", "body": "Hi"]],
                ],
            ],
            [
                "outcome": "rewritten", "apns_id": "p2", "request_id": "r2", "collapse_id": "c", "recorded_at": 2_000,
                "display": ["title": "Alice", "subtitle": "", "body": "Edited"],
            ],
            [
                "outcome": "rewritten", "apns_id": "p1", "request_id": "r1", "collapse_id": "c", "recorded_at": 1_000,
                "display": ["title": "Alice", "subtitle": "", "body": "First"],
            ],
        ]
        let cards = LockScreenPage.cards(results)
        #expect(cards.map { $0["apns_id"]?.stringValue ?? "" } == ["p3", "p3#1", "p3#0", "p2", "p1"])
        #expect(cards[2]["notification"]?["aps"]?["thread-id"] == "alice")
        #expect(cards.map(LockScreenPage.centerIdentifier) == [nil, "m2", "m1", "c", "c"])

        // Notification Center: m1 removed by a later extension, c shown (the newest with that identifier).
        var center = NotificationCenterLog.State()
        center.badge = 4
        for identifier in ["m2", "c"] {
            center.delivered.append(
                NotificationCenterLog.Delivered(
                    identifier: identifier, date: 1, notification: [:], title: "", subtitle: "", body: ""))
        }
        let marks = LockScreenPage.standing(cards, center: center)
        #expect(marks == ["p3#0": "removed", "p1": "replaced"])

        let html = LockScreenPage.render(
            LockScreenPage.Phone(device: try makeDevice(), results: results, center: center))
        #expect(html.contains(#"<span class="app-badge">4</span>"#))
        #expect(html.contains(#"class="card outcome-local removed" data-thread="alice" data-id="p3#0" data-nc="m1""#))
        #expect(html.contains("removed from Notification Center"))
        #expect(html.contains(#"class="card outcome-rewritten replaced""#) && html.contains("replaced by a newer one"))
        #expect(html.contains(#"class="card outcome-local" data-thread="" data-id="p3#1""#))
        #expect(html.contains("posted by the extension"))
        #expect(!html.contains(#"<div class="body">1 new</div>"#))  // scheduled, not shown yet
    }

    /// Show Previews hid the content (`preview_hidden`): the card shows the app and "Notification", not the text,
    /// the sender or the picture; a local notification the extension showed the same, by its own flag.
    @Test func aHiddenPreviewShowsTheAppAndNotification() {
        let result: JSON = [
            "outcome": "rewritten", "apns_id": "p1", "request_id": "r1", "recorded_at": 1_000, "preview_hidden": true,
            "display": ["title": "Alice", "subtitle": "", "body": "Lunch?"],
            "communication": ["sender_name": "Alice", "recipient_count": 1],
            "local_notifications": [
                [
                    "identifier": "m1", "shown": true, "preview_hidden": true,
                    "display": ["title": "Bob", "subtitle": "", "body": "Hi"],
                ]
            ],
        ]
        let cards = LockScreenPage.cards([result])
        let html = cards.map { LockScreenPage.card($0, appName: "org.example.app") }
        for card in html {
            #expect(card.contains(#"<div class="body">Notification</div>"#) && card.contains("preview hidden"))
            #expect(!card.contains(#"<div class="title">"#) && !card.contains(#"class="avatar""#))
        }
    }

    /// The category's buttons under the card (a destructive one marked, a text input's with its button), and the
    /// category's hidden-previews placeholder and title in place of "Notification"; all escaped.
    @Test func aCategorysActionsAndHiddenPreviewArePartOfTheCard() {
        let result: JSON = [
            "outcome": "rewritten", "apns_id": "p1", "request_id": "r1", "recorded_at": 1_000, "preview_hidden": true,
            "display": ["title": "Alice", "subtitle": "", "body": "Lunch?"],
            "hidden_preview": ["title": "Alice", "body": "2 new <messages>"],
            "actions": [
                ["identifier": "reply", "title": "Reply", "options": [], "text_input": ["button_title": "Send"]],
                ["identifier": "delete", "title": "Delete", "options": ["destructive"]],
            ],
        ]
        let card = LockScreenPage.card(result, appName: "org.example.app")
        #expect(card.contains(#"<div class="title">Alice</div>"#) && card.contains("2 new &lt;messages&gt;"), "\(card)")
        #expect(!card.contains(#"<div class="body">Lunch?</div>"#))
        #expect(!card.contains(#"<div class="body">Notification</div>"#))
        #expect(
            card.contains(#"<div class="actions"><button type="button" class="action" disabled>Reply … Send</button>"#))
        #expect(card.contains(#"<button type="button" class="action destructive" disabled>Delete</button>"#), "\(card)")
        var plain = result.objectValue ?? [:]
        plain["actions"] = nil
        #expect(!LockScreenPage.card(.object(plain), appName: "org.example.app").contains("actions"))
    }

    private func makeDevice() throws -> Device {
        try Device.create(at: NSTemporaryDirectory() + "nse-page-\(UUID().uuidString)")
    }
}
