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
}
