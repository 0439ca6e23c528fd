import NSEJSON
import NSEPayload
import Testing

@Suite struct IntakeTests {
    func accept(_ text: String, _ pushType: PushType = .alert, source: PayloadSource = .stdin) throws -> Payload {
        try Intake.accept(Array(text.utf8), pushType: pushType, source: source, bundleID: "org.example.app")
    }

    func rejection(_ bytes: [UInt8], _ pushType: PushType = .alert, source: PayloadSource = .stdin) -> PayloadRejection?
    {
        do {
            _ = try Intake.accept(bytes, pushType: pushType, source: source, bundleID: "org.example.app")
            return nil
        } catch { return error }
    }

    /// A syntactically valid payload of exactly `size` bytes.
    func payload(ofSize size: Int) -> [UInt8] {
        let head = #"{"aps":{"alert":"x"},"pad":""#
        let tail = #""}"#
        return Array((head + String(repeating: "a", count: size - head.utf8.count - tail.utf8.count) + tail).utf8)
    }

    @Test func sizeLimitsAreAPNs() {
        #expect(rejection(payload(ofSize: 4096)) == nil)
        #expect(rejection(payload(ofSize: 4097))?.reason == .payloadTooLarge)
        #expect(rejection(payload(ofSize: 5120), .voip) == nil)
        #expect(rejection(payload(ofSize: 5121), .voip)?.reason == .payloadTooLarge)
        #expect(rejection(payload(ofSize: 4097))?.detail.contains("4097") == true)
    }

    @Test(arguments: ["", " ", "\n\t "])
    func emptyIsPayloadEmpty(text: String) {
        #expect(rejection(Array(text.utf8))?.reason == .payloadEmpty)
    }

    @Test func malformedJSONNamesWhere() {
        let rejected = rejection(Array("{\"aps\":{\"alert\":\"x\",}\n}".utf8))
        #expect(rejected?.reason == .malformedPayload)
        #expect(rejected?.detail.contains("line 1") == true)
        #expect(rejection(Array(#"{"aps":{},"aps":{}}"#.utf8))?.detail.contains("duplicate") == true)
        #expect(rejection([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])?.reason == .malformedPayload)
        #expect(rejection(Array("[1]".utf8))?.reason == .malformedPayload)
        let deep = "{\"a\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect(rejection(Array(deep.utf8))?.detail.contains("deeper") == true)
    }

    @Test func simulatorFileMustTargetTheApp() throws {
        let good = #"{"Simulator Target Bundle":"org.example.app","aps":{"alert":"hi"}}"#
        let payload = try accept(good, source: .file("push.apns"))
        #expect(payload.root["Simulator Target Bundle"] == nil)
        let other = #"{"Simulator Target Bundle":"com.other.app","aps":{"alert":"hi"}}"#
        let rejected = rejection(Array(other.utf8), source: .file("push.apns"))
        #expect(rejected?.reason == .deviceTokenNotForTopic)
        #expect(rejected?.detail.contains("com.other.app") == true)
        #expect(
            rejection(Array(#"{"aps":{"alert":"hi"}}"#.utf8), source: .file("push.apns"))?.reason == .malformedPayload)
    }

    /// Found by the payload-intake fuzz target: a target bundle with an escaped line break in it was quoted raw, and
    /// the rejection spanned three lines.
    @Test func aRejectionQuotingTheTargetBundleStaysOneLine() throws {
        let forged = #"{"Simulator Target Bundle":"org.example\nFORGED: accepted\r","aps":{"alert":"hi"}}"#
        let rejected = try #require(rejection(Array(forged.utf8), source: .file("push\n.apns")))
        #expect(rejected.reason == .deviceTokenNotForTopic)
        #expect(!rejected.description.contains("\n") && !rejected.description.contains("\r"))
        #expect(rejected.detail.contains(#""org.example\nFORGED: accepted\r""#))
        // Whatever a detail is given, it is one line.
        #expect(PayloadRejection(.malformedPayload, "a\nb\u{85}c\u{7}").detail == "a b c")
        #expect(PayloadRejection(.malformedPayload, "a\r\n\tb").detail == "a b")
    }

    @Test func readsEveryKnownKey() throws {
        let payload = try accept(
            #"""
            {"aps":{"alert":{"title":"T","subtitle":"S","body":"B","loc-key":"IM_MSG","loc-args":["Alice",3],
             "title-loc-key":"TK","title-loc-args":["x"]},"badge":4,"sound":{"critical":1,"name":"a.caf","volume":0.5},
             "thread-id":"room","category":"msg_cat","content-available":1,"mutable-content":1,
             "interruption-level":"time-sensitive","relevance-score":0.7,"target-content-id":"t"},
             "call-id":"c1@host","chat-room-addr":"sip:room@host","from-uri":"sip:alice@host","display-name":"Alice",
             "send-time":"2026-11-21 10:00:00","pn_ttl":2592000,"uuid":"<urn:uuid:1>","customPayload":{"k":"v"},"extra":[1]}
            """#)
        guard case .fields(let alert) = payload.aps.alert else {
            Issue.record("alert")
            return
        }
        #expect(alert.title == "T" && alert.subtitle == "S" && alert.body == "B")
        #expect(alert.locKey == "IM_MSG" && alert.locArgs == ["Alice", "3"])
        #expect(alert.titleLocKey == "TK" && alert.titleLocArgs == ["x"])
        #expect(payload.aps.badge == 4 && payload.aps.sound == "a.caf" && payload.aps.criticalSound)
        #expect(payload.aps.threadID == "room" && payload.aps.category == "msg_cat")
        #expect(payload.aps.contentAvailable && payload.aps.mutableContent)
        #expect(payload.aps.interruptionLevel == "time-sensitive" && payload.aps.relevanceScore == 0.7)
        #expect(payload.callID == "c1@host" && payload.chatRoomAddress == "sip:room@host")
        #expect(payload.fromURI == "sip:alice@host" && payload.displayName == "Alice")
        #expect(payload.sendTime == "2026-11-21 10:00:00" && payload.ttl == 2_592_000)
        #expect(payload.instanceUUID == "<urn:uuid:1>" && payload.customPayload?["k"] == "v")
        #expect(payload.root["extra"] == [1])
        #expect(payload.warnings.isEmpty)
    }

    @Test func seedSpellingsAndVoipCallID() throws {
        #expect(try accept(#"{"aps":{"alert":"x"},"call_id":"a@b","chat_room_addr":"sip:r@b"}"#).callID == "a@b")
        #expect(try accept(#"{"aps":{"alert":"x"},"chat_room_addr":"sip:r@b"}"#).chatRoomAddress == "sip:r@b")
        #expect(try accept(#"{"aps":{"call-id":"v@b","sound":""}}"#, .voip).callID == "v@b")
    }

    @Test func wrongTypesAreIgnoredWithAWarning() throws {
        let payload = try accept(#"{"aps":{"alert":"x","mutable-content":"1","badge":"2"}}"#)
        #expect(!payload.aps.mutableContent)
        #expect(payload.aps.badge == nil)
        #expect(payload.warnings.count == 2)
        #expect(payload.warnings[0].contains("mutable-content"))
    }
}

@Suite struct LocalizationTests {
    @Test(arguments: [
        ("%@ sent you %@", ["Alice", "a photo"], "Alice sent you a photo"),
        ("%2$@ from %1$@", ["Alice", "Hello"], "Hello from Alice"),
        ("100%% sure, %@", ["Bob"], "100% sure, Bob"),
        ("%@ and %@", ["only one"], "only one and "),
        ("%d unread", ["3"], "3 unread"),
        ("plain", ["ignored"], "plain"),
        ("trailing %", [], "trailing %"),
    ])
    func substitutes(format: String, arguments: [String], expected: String) {
        #expect(StringsTable.substitute(format, arguments) == expected)
    }

    @Test func unknownKeyRendersAsTheKey() {
        #expect(StringsTable.linphoneDefaults.localized("NO_SUCH_KEY", arguments: ["x"]) == "NO_SUCH_KEY")
        #expect(StringsTable.linphoneDefaults.localized("IM_MSG") == "You have received a message")
        #expect(StringsTable.linphoneDefaults.localized("GC_MSG") == "You have been added to a chat room")
        #expect(StringsTable.linphoneDefaults.localized("IC_MSG") == "Incoming call")
        #expect(StringsTable.linphoneDefaults.localized("MWI_NOTIFY_STR") == "New voice message")
        #expect(StringsTable.linphoneDefaults.localized("Message received") == "Message received")
    }

    @Test func parsesStringsFiles() throws {
        let table = try StringsTable(
            stringsFile: """
                /* French */
                "IM_MSG" = "Vous avez reçu un message de %@";
                // a comment
                "QUOTE" = "say \\"hi\\"\\n";
                UNQUOTED = "ok";
                "ESC" = "caf\\U00e9";
                """)
        #expect(table.localized("IM_MSG", arguments: ["Alice"]) == "Vous avez reçu un message de Alice")
        #expect(table.format(for: "QUOTE") == "say \"hi\"\n")
        #expect(table.format(for: "UNQUOTED") == "ok")
        #expect(table.format(for: "ESC") == "café")
    }

    @Test func badStringsFileNamesTheLine() {
        do {
            _ = try StringsTable(stringsFile: "\"A\" = \"1\";\n\"B\" = \"2\"\n")
            Issue.record("parsed")
        } catch {
            #expect(error.line == 3)
            #expect(error.message.contains(";"))
        }
    }

    @Test func displayPrefersLocKeys() {
        var fields = APS.AlertFields()
        fields.title = "Literal title"
        fields.locKey = "IM_MSG"
        fields.body = "literal body"
        fields.subtitle = "Sub"
        let display = Display(alert: .fields(fields), strings: .linphoneDefaults)
        #expect(display == Display(title: "Literal title", subtitle: "Sub", body: "You have received a message"))
        #expect(Display(alert: .text("hello"), strings: .linphoneDefaults) == Display(body: "hello"))
        #expect(!Display(alert: .none, strings: .linphoneDefaults).hasText)
    }
}

@Suite struct PlaintextTests {
    func parse(_ text: String) throws(PlaintextError) -> Plaintext { try Plaintext(Array(text.utf8)) }

    @Test func message() throws {
        let plaintext = try parse(
            #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Hi","subject":"S","chat_room":"sip:room@x","sent_at":"2026-11-21T10:00:00Z"}"#
        )
        guard case .message(let message) = plaintext else {
            Issue.record("not a message")
            return
        }
        #expect(message.displayName == "Alice" && message.text == "Hi" && message.subject == "S")
        #expect(message.chatRoom == "sip:room@x" && message.sentAt == 1_795_255_200)
    }

    @Test func call() throws {
        let plaintext = try parse(
            #"{"type":"call","call_uuid":"6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11","from":"tel:+33612345678","handle_type":"phoneNumber","video":true}"#
        )
        guard case .call(let call) = plaintext else {
            Issue.record("not a call")
            return
        }
        #expect(call.handleType == .phoneNumber && call.video && call.displayName == nil)
    }

    @Test(arguments: [
        (#"not json"#, PlaintextError.Code.notJSON),
        (#"["type"]"#, .notJSON),
        (#"{"from":"sip:a@b","text":"x"}"#, .schema),
        (#"{"type":"message","text":"x"}"#, .schema),
        (#"{"type":"message","from":"sip:a@b"}"#, .schema),
        (#"{"type":"message","from":"sip:a@b","text":5}"#, .schema),
        (#"{"type":"sticker","from":"sip:a@b"}"#, .schema),
        (#"{"type":"message","from":"sip:a@b","text":"x","sent_at":"yesterday"}"#, .schema),
        (#"{"type":"message","from":"sip:a@b","text":"x","schema":2}"#, .schema),
        (#"{"type":"call","call_uuid":"nope","from":"sip:a@b"}"#, .schema),
        (
            #"{"type":"call","call_uuid":"6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11","from":"sip:a@b","handle_type":"fax"}"#,
            .schema
        ),
    ])
    func rejects(text: String, code: PlaintextError.Code) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch { #expect(error.code == code) }
    }

    @Test func errorsDoNotQuoteThePlaintext() {
        do { _ = try parse(#"{"type":"message","from":"sip:a@b","text":"SECRET-WORDS",}"#) } catch {
            #expect(!error.description.contains("SECRET"))
        }
    }

    @Test(arguments: [
        ("sip:alice@example.org", "alice"), ("<sips:bob@host;transport=tls>", "bob"), ("tel:+331234", "+331234"),
        ("\"Alice\" <sip:alice@h>", "alice"), ("weird", "weird"),
    ])
    func userPart(uri: String, user: String) {
        #expect(SIPAddressText.user(of: uri) == user)
    }
}
