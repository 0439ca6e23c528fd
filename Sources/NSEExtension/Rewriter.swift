import NSEJSON
public import NSEPayload

/// Builds the content the reference extension delivers: a rewrite of decrypted content, or the fallback.
public struct Rewriter: Sendable {
    public var payload: Payload
    public var strings: StringsTable

    /// The category Linphone gives message notifications.
    public static let messageCategory = "msg_cat"
    /// The category nse gives call alerts.
    public static let callCategory = "call_cat"

    public init(payload: Payload, strings: StringsTable) {
        self.payload = payload
        self.strings = strings
    }

    /// The original payload without the keys the rewrite consumes, with `aps.alert` replaced.
    private func content(alert: JSONObject, threadID: String? = nil, category: String) -> JSONObject {
        var content = payload.root
        content["enc"] = nil
        var aps = content["aps"]?.objectValue ?? JSONObject()
        aps["alert"] = .object(alert)
        if let threadID { aps["thread-id"] = .string(threadID) }
        aps["category"] = .string(category)
        content["aps"] = .object(aps)
        return content
    }

    /// A decrypted message → the notification the app wants shown.
    public func rewrite(_ message: Plaintext.Message, source: String) -> DeliveredContent {
        var alert: JSONObject = ["title": .string(message.displayName ?? SIPAddressText.user(of: message.from))]
        if let subject = message.subject, !subject.isEmpty { alert["subtitle"] = .string(subject) }
        alert["body"] = .string(message.text)
        var result = content(alert: alert, threadID: message.chatRoom, category: Rewriter.messageCategory)
        result["from"] = .string(message.from)
        return DeliveredContent(
            content: result, reason: ReasonCode.decrypted.reason("message from \(source)"),
            info: ["content_type": "message", "source": .string(source)])
    }

    /// An unencrypted text message, shown as it is.
    public func plainText(from: String, title: String, text: String) -> DeliveredContent {
        var result = content(
            alert: ["title": .string(title), "body": .string(text)], category: Rewriter.messageCategory)
        result["from"] = .string(from)
        return DeliveredContent(
            content: result, reason: ReasonCode.unencrypted.reason("a text/plain message, shown as it is"))
    }

    /// A call offer too old to ring: the app's "Missed call" string with the caller.
    public func missedCall(_ call: Plaintext.Call, reason: String) -> DeliveredContent {
        let alert: JSONObject = [
            "title": .string(strings.localized(StringsTable.Key.missedCall)),
            "body": .string(call.displayName ?? SIPAddressText.user(of: call.from)),
        ]
        var result = content(alert: alert, category: Rewriter.callCategory)
        result["from"] = .string(call.from)
        result["call_uuid"] = .string(call.callUUID)
        return DeliveredContent(content: result, reason: reason, info: ["content_type": "call"])
    }

    /// A call that could not be escalated: the `IC_MSG` text with the caller as the title.
    public func callFallback(_ call: Plaintext.Call, reason: String) -> DeliveredContent {
        let alert: JSONObject = [
            "title": .string(call.displayName ?? SIPAddressText.user(of: call.from)),
            "body": .string(strings.localized(StringsTable.Key.incomingCall)),
        ]
        var result = content(alert: alert, category: Rewriter.callCategory)
        result["from"] = .string(call.from)
        return DeliveredContent(content: result, isFallback: true, reason: reason, info: ["content_type": "call"])
    }

    /// A group-chat invitation: the `GC_MSG` text, with the room's subject as the title when known.
    public func chatRoomInvitation(room: String, subject: String?) -> DeliveredContent {
        let alert: JSONObject = [
            "title": .string(subject ?? strings.localized(StringsTable.Key.messageTitle)),
            "body": .string(strings.localized(StringsTable.Key.groupChat)),
        ]
        var result = content(alert: alert, threadID: room, category: Rewriter.messageCategory)
        result["chat_room"] = .string(room)
        return DeliveredContent(content: result, reason: ReasonCode.chatRoomInvitation.reason("\(room)"))
    }

    /// A message in a chat room the app has joined: the room's subject as the title, the sender (the rewrite's
    /// title) as the subtitle, the room as the thread, as Linphone shows a group chat. A room without a subject keeps
    /// the sender as the title.
    public func inRoom(_ delivered: DeliveredContent, address: String, subject: String) -> DeliveredContent {
        var delivered = delivered
        guard var aps = delivered.content["aps"]?.objectValue, var alert = aps["alert"]?.objectValue else {
            return delivered
        }
        if !subject.isEmpty {
            alert["subtitle"] = alert["title"]
            alert["title"] = .string(subject)
        }
        aps["alert"] = .object(alert)
        aps["thread-id"] = .string(address)
        delivered.content["aps"] = .object(aps)
        delivered.content["chat_room"] = .string(address)
        return delivered
    }

    /// The loc-key fallback: body = the localized `loc-key` text with its `loc-args` (else the original body),
    /// title = the app's "Message received" string.
    public func fallback(reason: String) -> DeliveredContent {
        var body = ""
        if case .fields(let fields) = payload.aps.alert {
            if let key = fields.locKey, !key.isEmpty {
                body = strings.localized(key, arguments: fields.locArgs ?? [])
            } else {
                body = fields.body ?? ""
            }
        } else if case .text(let text) = payload.aps.alert {
            body = text
        }
        if body.isEmpty { body = strings.localized(StringsTable.Key.message) }
        let alert: JSONObject = [
            "title": .string(strings.localized(StringsTable.Key.messageTitle)), "body": .string(body),
        ]
        return DeliveredContent(
            content: content(alert: alert, category: Rewriter.messageCategory), isFallback: true, reason: reason)
    }
}
