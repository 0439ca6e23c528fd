/// Instant Message Disposition Notifications (RFC 5438): the "delivered" notice an extension sends back.
public enum IMDN {
    /// The IMDN namespace URN.
    public static let namespace = "urn:ietf:params:imdn"

    /// A `message/cpim` body carrying a `message/imdn+xml` delivery notification for `messageID`.
    /// - Parameters:
    ///   - messageID: the `imdn.Message-ID` of the message being acknowledged.
    ///   - from: the recipient (who acknowledges), a SIP URI.
    ///   - to: the original sender, a SIP URI.
    ///   - notificationID: a fresh Message-ID for the notification itself.
    ///   - dateTime: RFC 3339 time of the notification.
    ///   - originalDateTime: the acknowledged message's `DateTime`, when it had one.
    public static func deliveryNotification(
        messageID: String, from: String, to: String, notificationID: String, dateTime: String,
        originalDateTime: String? = nil
    ) -> CPIMMessage {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <imdn xmlns="urn:ietf:params:xml:ns:imdn">
            <message-id>\(XMLText.escape(messageID))</message-id>
            <datetime>\(XMLText.escape(originalDateTime ?? dateTime))</datetime>

            """
        xml += """
            <delivery-notification><status><delivered/></status></delivery-notification>
            </imdn>

            """
        let body = Array(xml.utf8)
        return CPIMMessage(
            headers: [
                (name: "From", value: "<\(from)>"), (name: "To", value: "<\(to)>"), (name: "DateTime", value: dateTime),
                (name: "NS", value: "imdn <\(namespace)>"), (name: "imdn.Message-ID", value: notificationID),
            ],
            contentHeaders: [
                (name: "Content-Type", value: "message/imdn+xml"), (name: "Content-Disposition", value: "notification"),
                (name: "Content-Length", value: String(body.count)),
            ],
            body: body)
    }

    /// The acknowledged Message-ID and status of an IMDN document, if `bytes` is one.
    public static func parse(_ bytes: [UInt8]) -> (messageID: String, status: String)? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let id = element("message-id", in: text) else { return nil }
        for status in ["delivered", "failed", "forbidden", "error", "displayed", "processed", "stored"]
        where text.contains("<\(status)/>") || text.contains("<\(status) />") {
            return (id, status)
        }
        return nil
    }

    static func element(_ name: String, in text: String) -> String? {
        guard let open = text.firstRange(of: "<\(name)>"), let close = text[open.upperBound...].firstRange(of: "</\(name)>")
        else { return nil }
        return unescape(String(text[open.upperBound..<close.lowerBound]))
    }

    static func unescape(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&amp;", with: "&")
    }
}

/// Escaping text for XML content and attribute values.
public enum XMLText {
    /// `&`, `<`, `>` and `"` as entities.
    public static func escape(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            default: output.append(character)
            }
        }
        return output
    }
}
