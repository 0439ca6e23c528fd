import NSEChat

/// CPIM (RFC 3862) with its IMDN headers, and IMDN documents (RFC 5438).
enum ChatTarget {
    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        if let message = CPIMMessage(bytes: bytes) {
            // What the extension reads of a message.
            _ = (message.contentType, message.imdnMessageID, message.dispositionNotification)
            _ = (message.header("From"), message.header("DateTime"), message.contentHeader("Content-Length"))
            // The wire form parses back to the same message.
            guard let again = CPIMMessage(bytes: message.bytes) else {
                throw FuzzFinding(.cpim, "a parsed CPIM message does not parse once written")
            }
            guard again == message else {
                throw FuzzFinding(.cpim, "a parsed CPIM message parses to a different message once written")
            }
            _ = IMDN.parse(message.body)
        }
        _ = IMDN.parse(bytes)

        // A delivery notification for any Message-ID acknowledges exactly that Message-ID.
        let messageID = String(decoding: bytes.prefix(256), as: UTF8.self)
        let notice = IMDN.deliveryNotification(
            messageID: messageID, from: "sip:bob@example.org", to: "sip:alice@example.org", notificationID: "n1",
            dateTime: "2026-01-01T00:00:00Z")
        guard let reread = CPIMMessage(bytes: notice.bytes), reread == notice else {
            throw FuzzFinding(.cpim, "a delivery notification does not parse back as the CPIM message written")
        }
        guard let parsed = IMDN.parse(reread.body) else {
            throw FuzzFinding(.cpim, "a delivery notification's IMDN document does not parse")
        }
        guard parsed.messageID == messageID, parsed.status == "delivered" else {
            throw FuzzFinding(.cpim, "a delivery notification parses to another Message-ID or status")
        }
    }
}
