import NSEChat
import Testing

@Suite struct ChatTests {
    let linphoneStyle = """
        From: <sip:alice@example.org>\r
        To: <sip:bob@example.org>\r
        DateTime: 2026-11-21T12:00:00Z\r
        NS: imdn <urn:ietf:params:imdn>\r
        imdn.Message-ID: 1Xp7zK\r
        imdn.Disposition-Notification: positive-delivery, display\r
        \r
        Content-Type: text/plain;charset=UTF-8\r
        Content-Length: 11\r
        \r
        Lunch at 1?
        """

    @Test func parsesCPIMAsLinphoneSendsIt() throws {
        let message = try #require(CPIMMessage(bytes: Array(linphoneStyle.utf8)))
        #expect(message.header("from") == "<sip:alice@example.org>")
        #expect(message.imdnMessageID == "1Xp7zK")
        #expect(message.dispositionNotification == ["positive-delivery", "display"])
        #expect(message.contentType == "text/plain")
        #expect(message.body == Array("Lunch at 1?".utf8))
        #expect(CPIMMessage(bytes: message.bytes) == message)
        #expect(message.bytes == Array(linphoneStyle.utf8))
        // Names and values lose the spaces and tabs around them; a name is found in any case.
        let padded = try #require(
            CPIMMessage(bytes: Array(" From :\t<sip:a@b> \r\n\r\nCONTENT-TYPE: text/plain\r\n\r\nx".utf8)))
        #expect(padded.headers.map(\.name) == ["From"] && padded.header("FROM") == "<sip:a@b>")
        #expect(padded.contentType == "text/plain" && padded.body == [0x78])
        // A space before a combining mark goes (one Character with it, but a space by its scalar); so in a list.
        let marked = "Subject: \u{0301}hi \r\nimdn.Disposition-Notification: \t display ,  \u{0301}x\r\n\r\n\r\n"
        let parsed = try #require(CPIMMessage(bytes: Array(marked.utf8)))
        #expect(parsed.header("subject") == "\u{0301}hi")
        #expect(parsed.dispositionNotification == ["display", "\u{0301}x"])
    }

    @Test func namespacePrefixIsHonoured() throws {
        let text = "NS: x <urn:ietf:params:imdn>\r\nx.Message-ID: 42\r\n\r\nContent-Type: text/plain\r\n\r\nhi"
        #expect(CPIMMessage(bytes: Array(text.utf8))?.imdnMessageID == "42")
    }

    @Test(arguments: ["just text", "nse1.x25519-sealedbox.abc.def", ""])
    func nonCPIMIsNotParsed(text: String) {
        #expect(CPIMMessage(bytes: Array(text.utf8)) == nil)
    }

    @Test func deliveryNotification() throws {
        let notice = IMDN.deliveryNotification(
            messageID: "1Xp7zK", from: "sip:bob@example.org", to: "sip:alice@example.org", notificationID: "n1",
            dateTime: "2026-11-21T12:00:05Z", originalDateTime: "2026-11-21T12:00:00Z")
        let parsed = try #require(CPIMMessage(bytes: notice.bytes))
        #expect(parsed.contentType == "message/imdn+xml")
        #expect(parsed.contentHeader("Content-Disposition") == "notification")
        #expect(parsed.header("To") == "<sip:alice@example.org>")
        #expect(parsed.imdnMessageID == "n1")
        let status = try #require(IMDN.parse(parsed.body))
        #expect(status.messageID == "1Xp7zK" && status.status == "delivered")
        #expect(String(decoding: parsed.body, as: UTF8.self).contains("<datetime>2026-11-21T12:00:00Z</datetime>"))
    }

    @Test func escapesXML() {
        let notice = IMDN.deliveryNotification(
            messageID: "a<b>&c", from: "sip:b@x", to: "sip:a@x", notificationID: "n", dateTime: "t")
        #expect(IMDN.parse(notice.body)?.messageID == "a<b>&c")
        #expect(String(decoding: notice.body, as: UTF8.self).contains("a&lt;b&gt;&amp;c"))
    }
}
