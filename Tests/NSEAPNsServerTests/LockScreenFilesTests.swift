import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

@testable import NSEAPNsServer

#if canImport(Glibc)
    import Glibc
#endif

/// The lock-screen page's communication notifications and attachments: the cards drawn from result documents, and
/// `GET /v1/devices/{token}/attachments/{request}/{file}`, the route their pictures come from, confined to the
/// device's attachment store.
@Suite struct LockScreenFilesTests {
    static let token = "ab12"
    static let request = "FAC4263D-0000-4000-8000-000000000001"

    /// A recorded result with a shown alert and what `extra` adds (`attachments`, `communication`).
    static func result(_ extra: JSONObject, body: String = "Lunch at 1?") -> JSON {
        var result: JSONObject = [
            "outcome": "rewritten", "apns_id": "a1", "request_id": .string(request), "recorded_at": 3_600_000,
            "notification": ["aps": ["alert": ["title": "New message", "body": .string(body)]]],
            "display": ["title": "New message", "subtitle": "", "body": .string(body)],
        ]
        for (key, value) in extra { result[key] = value }
        return .object(result)
    }

    static func communication(
        sender: String = "Alice Smith", avatar: String? = "/d/attachments/\(request)/avatar", group: String? = nil,
        groupAvatar: String? = nil, recipients: Int = 0
    ) -> JSON {
        [
            "intent": "INSendMessageIntent", "sender_name": .string(sender), "sender_handle": "sip:alice@example.org",
            "sender_handle_type": "unknown", "has_avatar": .bool(avatar != nil), "avatar_path": avatar.json,
            "group_name": group.json, "group_avatar_path": groupAvatar.json,
            "conversation_identifier": "conversation-1", "recipient_count": .int(Int64(recipients)),
            "service_name": "SIP",
        ]
    }

    /// The card's banner alone (the detail panel holds the document).
    static func banner(_ card: String) -> String {
        let start = card.range(of: "<div class=\"banner")!.lowerBound
        let end = card.range(of: "<details>")!.lowerBound
        return String(card[start..<end])
    }

    @Test func aCommunicationNotificationShowsTheSendersAvatarAndName() {
        let card = LockScreenPage.card(
            Self.result(["communication": Self.communication()]), appName: "org.example.app", token: Self.token)
        let banner = Self.banner(card)
        #expect(banner.hasPrefix(#"<div class="banner communication"><div class="avatar">"#))
        #expect(
            banner.contains(
                #"<span class="initials">AS</span>"#
                    + #"<img class="avatar-picture" src="/v1/devices/ab12/attachments/\#(Self.request)/avatar" alt="">"#
                    + #"<span class="app-icon">A</span></div>"#))
        // The sender's name in place of the content's title, then the body.
        #expect(banner.contains(#"<div class="title">Alice Smith</div><div class="body">Lunch at 1?</div>"#))
        #expect(!banner.contains("New message"))
        // No path of the server's disk anywhere: the document's avatar_path is the URL too.
        #expect(!card.contains("/d/attachments"))
        let url = "/v1/devices/ab12/attachments/\(Self.request)/avatar"
        #expect(card.contains("&quot;avatar_path&quot;: &quot;\(url)&quot;"))
        // Without a token (no device to serve from), initials instead of a picture.
        let alone = LockScreenPage.card(
            Self.result(["communication": Self.communication()]), appName: "org.example.app")
        #expect(alone.contains(#"<span class="initials">AS</span>"#) && !alone.contains("<img"))
        #expect(alone.contains("&quot;avatar_path&quot;: &quot;avatar&quot;"))
    }

    @Test func aGroupShowsItsNameUnderTheSenderAndItsPicture() {
        let group = Self.communication(
            group: "Book club", groupAvatar: "/d/attachments/\(Self.request)/group-avatar", recipients: 3)
        let banner = Self.banner(
            LockScreenPage.card(Self.result(["communication": group]), appName: "org.example.app", token: Self.token))
        #expect(banner.contains(#"src="/v1/devices/ab12/attachments/\#(Self.request)/group-avatar""#))
        #expect(
            banner.contains(
                #"<div class="title">Alice Smith</div><div class="subtitle group">Book club</div>"#
                    + #"<div class="body">Lunch at 1?</div>"#))
        // One recipient: a direct conversation for iOS, whatever the group's name; the sender's own picture.
        let direct = Self.communication(
            group: "Book club", groupAvatar: "/d/attachments/\(Self.request)/group-avatar", recipients: 1)
        let directBanner = Self.banner(
            LockScreenPage.card(Self.result(["communication": direct]), appName: "org.example.app", token: Self.token))
        #expect(!directBanner.contains("Book club") && directBanner.contains("/avatar\""))
        // A group without a picture of its own shows the sender's.
        let plain = Self.communication(group: "Book club", recipients: 2)
        let plainBanner = Self.banner(
            LockScreenPage.card(Self.result(["communication": plain]), appName: "org.example.app", token: Self.token))
        #expect(plainBanner.contains("/avatar\"") && plainBanner.contains("Book club"))
    }

    @Test func withoutAPictureTheAvatarIsTheSendersInitials() {
        #expect(LockScreenPage.Conversation.initials("Alice Smith") == "AS")
        #expect(LockScreenPage.Conversation.initials("alice") == "A")
        #expect(LockScreenPage.Conversation.initials("Jean Paul  Sartre ") == "JS")
        #expect(LockScreenPage.Conversation.initials("émile zola") == "ÉZ")
        #expect(LockScreenPage.Conversation.initials("+33 6 12") == "")
        let card = LockScreenPage.card(
            Self.result(["communication": Self.communication(sender: "+33 6 12", avatar: nil)]),
            appName: "org.example.app", token: Self.token)
        #expect(card.contains(#"<span class="initials silhouette"></span><span class="app-icon">A</span>"#))
        #expect(card.contains(#"<div class="title">+33 6 12</div>"#))
        // No name at all: the handle.
        let handle = LockScreenPage.card(
            Self.result(["communication": Self.communication(sender: "", avatar: nil)]), appName: "org.example.app")
        #expect(handle.contains(#"<div class="title">sip:alice@example.org</div>"#))
    }

    @Test func anImageAttachmentIsAThumbnailAndOthersAGlyph() {
        func attachment(_ kind: String, name: String, hidden: Bool = false) -> JSON {
            [
                "identifier": "picture", "type": "public.png", "kind": .string(kind), "size": 2048,
                "path": .string("/tmp/bob/attachments/\(Self.request)/\(name)"), "thumbnail_hidden": .bool(hidden),
            ]
        }
        func banner(_ attachments: [JSON]) -> String {
            Self.banner(
                LockScreenPage.card(
                    Self.result(["attachments": .array(attachments)]), appName: "org.example.app", token: Self.token))
        }
        let image = banner([attachment("image", name: "0-picture.png"), attachment("audio", name: "1-a.m4a")])
        #expect(image.hasPrefix(#"<div class="banner"><div class="text">"#))
        #expect(
            image.hasSuffix(
                #"</div><img class="thumbnail" src="/v1/devices/ab12/attachments/\#(Self.request)/0-picture.png" alt=""></div>"#
            ))
        #expect(!image.contains("/tmp/bob"))
        #expect(!banner([attachment("image", name: "0-picture.png", hidden: true)]).contains("thumbnail"))
        #expect(
            banner([attachment("audio", name: "0-a.m4a")]).contains(#"<span class="thumbnail glyph" title="audio">"#))
        #expect(
            banner([attachment("movie", name: "0-m.mov")]).contains(#"<span class="thumbnail glyph" title="movie">"#))
        // A name that needs escaping is percent-encoded in the URL; a hidden one, or a path that is not a stored
        // file's, has no URL and no thumbnail.
        let odd = banner([attachment("image", name: #"0-a "b"<c>&.png"#)])
        #expect(odd.contains(#"/0-a%20%22b%22%3Cc%3E%26.png""#))
        #expect(!banner([attachment("image", name: ".hidden.png")]).contains("<img"))
        var elsewhere = attachment("image", name: "x.png").objectValue!
        elsewhere["path"] = "/etc/passwd"
        #expect(!banner([.object(elsewhere)]).contains("<img"))
    }

    @Test func aVoiceNoteHasALineWithItsLength() {
        func audio(_ duration: Double?) -> JSON {
            var object: JSONObject = [
                "identifier": "voice", "type": "com.microsoft.waveform-audio", "kind": "audio", "size": 2048,
                "path": .string("/tmp/bob/attachments/\(Self.request)/0-voice.wav"), "thumbnail_hidden": false,
            ]
            if let duration { object["duration"] = .double(duration) }
            return .object(object)
        }
        func card(_ attachments: [JSON]) -> String {
            LockScreenPage.card(
                Self.result(["attachments": .array(attachments)]), appName: "org.example.app", token: Self.token)
        }
        #expect(card([audio(67.4)]).contains("<div class=\"media-line\">\u{266A} 1:07</div>"))
        #expect(card([audio(nil)]).contains("<div class=\"media-line\">\u{266A} voice note</div>"))
        // The first audio or movie, after a picture.
        let picture: JSON = [
            "identifier": "p", "type": "public.png", "kind": "image", "size": 1, "path": "/tmp/p.png",
            "thumbnail_hidden": false,
        ]
        #expect(card([picture, audio(3)]).contains("\u{266A} 0:03</div>"))
        #expect(!card([picture]).contains("media-line"))
    }

    @Test func whatThePushCarriesIsEscaped() {
        let hostile = #"<img src=x onerror=alert(1)> & "q""#
        let card = LockScreenPage.card(
            Self.result(
                ["communication": Self.communication(sender: hostile, avatar: nil, group: hostile, recipients: 2)],
                body: hostile),
            appName: "org.example.app", token: Self.token)
        #expect(!card.contains("<img src=x"))
        #expect(card.contains(#"<div class="title">&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot;</div>"#))
        #expect(
            card.contains(#"<div class="subtitle group">&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot;</div>"#))
        #expect(card.contains(#"<span class="initials silhouette"></span>"#))
        #expect(AttachmentFiles.url(token: "t", storedPath: "/x/attachments/r/\u{1}.png") == nil)
    }

    // MARK: - The route

    /// Two devices served in process; `bob`'s store holds one picture.
    struct TwoDevices {
        let bob: Device
        let carol: Device
        let service: PushService
        var app: some ApplicationProtocol { Application(responder: PushResponder(service: service)) }
        var folder: String { bob.directory + "/attachments/" + LockScreenFilesTests.request }
        static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 300)

        init() throws {
            let root = try TestSupport.temporaryDirectory("nse-page-files")
            var options = Device.Options()
            options.bundleID = "org.example.app"
            bob = try Device.create(at: root + "/bob", options: options)
            carol = try Device.create(at: root + "/carol", options: options)
            service = PushService(
                devices: [bob, carol], concurrency: 1, queueCapacity: 4,
                extensionCommand: [TestSupport.referenceExtension], logger: ServedDevice.quietLogger)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(Self.png).write(to: URL(fileURLWithPath: folder + "/0-picture.png"))
        }

        /// Status, content type and body of a GET.
        func get(_ uri: String) async throws -> (status: Int, type: String, body: [UInt8], headers: HTTPFields) {
            try await app.test(.router) { client in
                try await client.execute(uri: uri, method: .get) { response in
                    (
                        Int(response.status.code), response.headers[.contentType] ?? "",
                        Array(response.body.readableBytesView), response.headers
                    )
                }
            }
        }
    }

    @Test func theRouteServesAStoredFileWithItsType() async throws {
        let served = try TwoDevices()
        let token = served.bob.config.remoteToken
        let answer = try await served.get("/v1/devices/\(token)/attachments/\(Self.request)/0-picture.png")
        #expect(answer.status == 200 && answer.type == "image/png" && answer.body == TwoDevices.png)
        #expect(answer.headers[.cacheControl] == "no-store")
        #expect(answer.headers[.init("x-content-type-options")!] == "nosniff")
        // The type comes from the bytes, not the name; the token's case does not matter.
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 1, count: 200_000)
        try Data(jpeg).write(to: URL(fileURLWithPath: served.folder + "/1 my photo é.png"))
        let url = try #require(AttachmentFiles.url(token: token, storedPath: served.folder + "/1 my photo é.png"))
        #expect(url.hasSuffix("/1%20my%20photo%20%C3%A9.png"))
        let big = try await served.get(url.replacingOccurrences(of: token.lowercased(), with: token.uppercased()))
        #expect(big.status == 200 && big.type == "image/jpeg" && big.body == jpeg)
        try Data("<svg onload=alert(1)>".utf8).write(to: URL(fileURLWithPath: served.folder + "/2.svg"))
        let svg = try await served.get("/v1/devices/\(token)/attachments/\(Self.request)/2.svg")
        #expect(svg.status == 200 && svg.type == "application/octet-stream")
    }

    @Test(arguments: [
        "../device.json", "..", ".", "%2E%2E", "..%2Fdevice.json", "%2e%2e%2fdevice.json", ".hidden",
        "0-picture.png%00",
        "0-picture.png%2", "missing.png", "link.png", "fifo.png", "hardlink.png", "sub",
    ])
    func theRouteServesNothingElse(file: String) async throws {
        let served = try TwoDevices()
        let bob = served.bob.config.remoteToken
        try Data("secret".utf8).write(to: URL(fileURLWithPath: served.bob.directory + "/secret.txt"))
        try Data(TwoDevices.png).write(to: URL(fileURLWithPath: served.folder + "/.hidden"))
        symlink(served.bob.directory + "/secret.txt", served.folder + "/link.png")
        mkfifo(served.folder + "/fifo.png", 0o600)
        link(served.folder + "/0-picture.png", served.folder + "/hardlink.png")
        try FileManager.default.createDirectory(atPath: served.folder + "/sub", withIntermediateDirectories: true)
        let answer = try await served.get("/v1/devices/\(bob)/attachments/\(Self.request)/\(file)")
        #expect(answer.status == 404, "\(file)")
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"reason":"BadPath"}"#)
    }

    @Test func theRouteStaysInsideTheDevicesOwnStore() async throws {
        let served = try TwoDevices()
        let bob = served.bob.config.remoteToken
        let carol = served.carol.config.remoteToken
        let path = "attachments/\(Self.request)/0-picture.png"
        // Another device's token does not reach bob's file; an unknown token, nothing.
        #expect(try await served.get("/v1/devices/\(carol)/\(path)").status == 404)
        #expect(try await served.get("/v1/devices/\(String(repeating: "ab", count: 32))/\(path)").status == 404)
        // Traversal in the request folder, and a request folder that is a link out of the store.
        for request in ["..", "%2E%2E", ".", "..%2F..%2Fcarol"] {
            #expect(try await served.get("/v1/devices/\(bob)/attachments/\(request)/0-picture.png").status == 404)
        }
        let carolFolder = served.carol.directory + "/attachments/other"
        try FileManager.default.createDirectory(atPath: carolFolder, withIntermediateDirectories: true)
        try Data(TwoDevices.png).write(to: URL(fileURLWithPath: carolFolder + "/0-picture.png"))
        symlink(carolFolder, served.bob.directory + "/attachments/other")
        #expect(try await served.get("/v1/devices/\(bob)/attachments/other/0-picture.png").status == 404)
        #expect(try await served.get("/v1/devices/\(carol)/attachments/other/0-picture.png").status == 200)
        // Paths the router takes apart: more components, none, a dot-dot between them.
        for uri in [
            "/v1/devices/\(bob)/attachments/\(Self.request)/0-picture.png/x", "/v1/devices/\(bob)/attachments/",
            "/v1/devices/\(bob)/attachments/\(Self.request)/../../device.json",
            "/v1/devices/\(bob)/attachments/../device.json",
        ] {
            #expect(try await served.get(uri).status == 404, "\(uri)")
        }
        // A store that is itself a link out of the device: nothing from it.
        let elsewhere = try TestSupport.temporaryDirectory("nse-page-elsewhere")
        try FileManager.default.createDirectory(
            atPath: elsewhere + "/" + Self.request, withIntermediateDirectories: true)
        try Data(TwoDevices.png).write(to: URL(fileURLWithPath: elsewhere + "/\(Self.request)/0-picture.png"))
        try FileManager.default.removeItem(atPath: served.carol.directory + "/attachments")
        symlink(elsewhere, served.carol.directory + "/attachments")
        #expect(try await served.get("/v1/devices/\(carol)/\(path)").status == 404)
    }

    /// The whole path: an extension (Python, speaking docs/protocol.md) attaches a picture and makes a communication
    /// notification; the host moves both into the store; the page's card links them; the route serves them.
    @Test func thePageLinksWhatTheHostStored() async throws {
        let root = try TestSupport.temporaryDirectory("nse-page-rich")
        var options = Device.Options()
        options.bundleID = "org.example.app"
        var entitled = try Device.create(at: root + "/bob", options: options)
        entitled.config.communication = true
        try entitled.save()
        let device = entitled
        let script = root + "/rich.py"
        try TestSupport.write(Self.richExtension, to: script)
        let service = PushService(
            devices: [device], concurrency: 1, queueCapacity: 4, extensionCommand: ["/usr/bin/env", "python3", script],
            logger: ServedDevice.quietLogger)
        let app = Application(responder: PushResponder(service: service))
        let payload = #"{"aps":{"alert":{"title":"New message","body":"Photo"},"mutable-content":1}}"#
        try await app.test(.router) { client in
            let status = try await client.execute(
                uri: "/3/device/\(device.config.remoteToken)", method: .post,
                headers: fields([("apns-topic", "org.example.app"), ("apns-push-type", "alert")]),
                body: ByteBuffer(string: payload)
            ) { $0.status.code }
            #expect(status == 200)
        }
        for _ in 0..<1000 where service.queue.pending > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        let result = try #require(try service.store.results(for: device, limit: 1).first)
        #expect(result["outcome"]?.stringValue == "rewritten", "\(result.serialized())")
        try await app.test(.router) { client in
            let html = try await client.execute(uri: "/", method: .get) { String(buffer: $0.body) }
            #expect(!html.contains(device.directory + "/attachments"))
            var sources: [String] = []
            for marker in [#"<img class="avatar-picture" src=""#, #"<img class="thumbnail" src=""#] {
                let start = try #require(html.range(of: marker), "\(marker)").upperBound
                sources.append(String(html[start...].prefix { $0 != "\"" }))
            }
            for source in sources {
                let (status, type, size) = try await client.execute(uri: source, method: .get) {
                    ($0.status.code, $0.headers[.contentType] ?? "", $0.body.readableBytes)
                }
                #expect(status == 200 && type == "image/png" && size > 8, "\(source)")
            }
        }
    }

    /// A version-1 extension that writes a small PNG twice, attaches one and makes the other the sender's avatar.
    static let richExtension = #"""
        import json, os, struct, sys, tempfile, zlib

        def png(width, height, rgb):
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
            header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
            return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

        def written(name, rgb):
            handle, path = tempfile.mkstemp(suffix="-" + name)
            os.write(handle, png(8, 8, rgb))
            os.close(handle)
            return path

        request = json.loads(sys.stdin.readline())
        content = dict(request["payload"])
        print(json.dumps({"type": "content", "content": content,
            "attachments": [{"identifier": "picture", "path": written("picture.png", (200, 40, 40)),
                             "type": "public.png", "thumbnail_hidden": False}],
            "communication": {"intent": "INSendMessageIntent", "sender_name": "Alice", "sender_handle": "alice",
                              "sender_handle_type": "unknown", "avatar_path": written("avatar.png", (40, 90, 200)),
                              "group_name": None, "group_avatar_path": None, "conversation_identifier": "c1",
                              "recipient_count": 0, "service_name": "SIP"}}), flush=True)
        sys.stdin.read()
        """#
}
