import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NSEDevice
import NSEJSON
import NSEServer
import Testing

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
}
