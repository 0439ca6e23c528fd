import NSESystem

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
    ///
    /// Searches bytes, not `Character`s: a combining mark after `>` joins it into one grapheme cluster, and a
    /// character search would then miss the tag.
    public static func parse(_ bytes: [UInt8]) -> (messageID: String, status: String)? {
        guard let id = element("message-id", in: bytes) else { return nil }
        for status in ["delivered", "failed", "forbidden", "error", "displayed", "processed", "stored"]
        where find(Array("<\(status)/>".utf8), in: bytes[...]) != nil
            || find(Array("<\(status) />".utf8), in: bytes[...]) != nil
        {
            return (id, status)
        }
        return nil
    }

    static func element(_ name: String, in bytes: [UInt8]) -> String? {
        guard let open = find(Array("<\(name)>".utf8), in: bytes[...]),
            let close = find(Array("</\(name)>".utf8), in: bytes[open.upperBound...])
        else { return nil }
        return unescape(String(decoding: bytes[open.upperBound..<close.lowerBound], as: UTF8.self))
    }

    /// The first occurrence of `needle` in `haystack`.
    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var start = haystack.startIndex
        while start + needle.count <= haystack.endIndex {
            if haystack[start] == needle[0], haystack[start..<(start + needle.count)].elementsEqual(needle) {
                return start..<(start + needle.count)
            }
            start += 1
        }
        return nil
    }

    /// The five predefined entities back to characters, in one pass (so `&amp;lt;` stays `&lt;`). Works on scalars:
    /// an `&` followed by a combining mark is one `Character`, and character indices would split it.
    static func unescape(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        let entities: [(name: [Unicode.Scalar], value: Unicode.Scalar)] = [
            ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&"),
        ].map { (Array($0.0.unicodeScalars), $0.1) }
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if scalars[index] == "&",
                let entity = entities.first(where: { scalars[index...].starts(with: $0.name) })
            {
                output.append(entity.value)
                index += entity.name.count
            } else {
                output.append(scalars[index])
                index += 1
            }
        }
        return String(output)
    }
}
