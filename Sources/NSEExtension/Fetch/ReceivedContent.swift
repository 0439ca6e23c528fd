import NSEChat
import NSECrypto
import NSEDevice
import NSESIP
import NSESystem

/// A MESSAGE as the extension uses it, whether it came from the network or the shared store.
struct ReceivedContent {
    /// The content type nse's sender gives a bare envelope.
    static let envelopeType = "application/vnd.nse.envelope"

    var callID: String
    var from: String
    var fromDisplayName: String?
    var to: String
    var contentType: String
    var body: [UInt8]
    var receivedAt: Int64

    init(_ message: SIPReceivedMessage) {
        callID = message.callID
        from = message.from.map { $0.uri.description } ?? ""
        fromDisplayName = message.from?.displayName
        to = message.to.map { $0.uri.description } ?? ""
        contentType = (message.contentType ?? "text/plain").lowercased()
        body = message.body
        receivedAt = SystemClock.unixMilliseconds()
    }

    init(_ stored: StoredMessage) {
        callID = stored.callID
        from = stored.from
        to = stored.to
        contentType = stored.contentType.lowercased()
        body = stored.body
        receivedAt = stored.receivedAt
    }

    /// The content type and body inside a CPIM wrapper, or the message's own.
    var innerContent: (type: String, body: [UInt8]) {
        Self.innerContent(type: contentType, body: body)
    }

    /// The content type and body inside a CPIM wrapper, or the ones given; `type` lowercased.
    static func innerContent(type contentType: String, body: [UInt8]) -> (type: String, body: [UInt8]) {
        if contentType.hasPrefix("message/cpim"), let cpim = CPIMMessage(bytes: body) {
            return (cpim.contentType, cpim.body)
        }
        return (contentType.split(separator: ";").first.map(String.init) ?? contentType, body)
    }

    /// Whether a body of this type (lowercased) is a sealed envelope, bare or in CPIM, as the content step opens it.
    static func isSealedEnvelope(type contentType: String, body: [UInt8]) -> Bool {
        let (type, inner) = innerContent(type: contentType, body: body)
        return type == envelopeType || Envelope.hasFormatTag(String(decoding: inner.prefix(16), as: UTF8.self))
    }

    /// The IMDN to send when the sender asked for a delivery notification: (recipient, CPIM body).
    func deliveryNotice(recipient: String) -> (to: String, body: [UInt8])? {
        guard contentType.hasPrefix("message/cpim"), let cpim = CPIMMessage(bytes: body),
            cpim.dispositionNotification.contains("positive-delivery"), let messageID = cpim.imdnMessageID,
            !from.isEmpty
        else { return nil }
        let now = SystemClock.rfc3339(unixSeconds: SystemClock.unixMilliseconds() / 1000)
        let notificationID = (try? SecureRandom.hex(8)) ?? String(SystemClock.unixMilliseconds())
        let notice = IMDN.deliveryNotification(
            messageID: messageID, from: recipient, to: from, notificationID: notificationID, dateTime: now,
            originalDateTime: cpim.header("DateTime"))
        return (from, notice.bytes)
    }
}

extension StoredMessage {
    init(_ received: ReceivedContent) {
        self.init(
            callID: received.callID, from: received.from, to: received.to, contentType: received.contentType,
            body: received.body, receivedAt: received.receivedAt)
    }
}
