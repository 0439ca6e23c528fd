public import NSEJSON
public import NSEPayload
public import NSEProtocol

/// What an extension had handed its host when its content came: all the verdict needs to judge the push again
/// without running it. A recording host (`nse serve`) keeps it on disk before it tells the extension
/// `content-accepted`; a host started again after a crash judges the push on it (``NotificationHost``).
public struct ExtensionHandover: Sendable, Equatable, JSONConvertible {
    /// The content it delivered (`contentHandler`).
    public var content: DeliveredContent
    /// Whether the content came after the expiry notice.
    public var afterExpiry: Bool
    /// Whether it called `reportNewIncomingVoIPPushPayload`, and what the host answered last.
    public var voipReported: Bool
    public var voipError: VoIPReportFailure?
    /// The framework it reported through.
    public var voipFramework: VoIPFramework
    /// The call offer the host accepted: once the push is judged the app is launched with it, to report the call.
    public var acceptedVoIPPayload: JSONObject?
    /// The local notifications it had added: already in the device's Notification Center, listed in the result.
    public var localNotifications: [LocalNotification]

    /// The handover of `content`, the rest as the session's record says it.
    init(_ content: DeliveredContent, record: ExtensionMachine.Record) {
        self.content = content
        afterExpiry = record.deliveredAfterExpiry
        voipReported = record.voipReported
        voipError = record.voipError
        voipFramework = record.voipFramework
        acceptedVoIPPayload = record.acceptedVoIPPayload
        localNotifications = record.localNotifications
    }

    /// The record of a process that handed this over and ended on its own terms.
    var record: ExtensionMachine.Record {
        var record = ExtensionMachine.Record()
        record.delivered = content
        record.deliveredAfterExpiry = afterExpiry
        record.expirySent = afterExpiry
        record.voipReported = voipReported
        record.voipError = voipError
        record.voipFramework = voipFramework
        record.acceptedVoIPPayload = acceptedVoIPPayload
        record.localNotifications = localNotifications
        return record
    }

    public static var jsonKind: String { "an object" }

    /// `{"content": <the extension's content line>, "after_expiry", "voip_reported", "voip_error",
    /// "accepted_voip_payload"}`, `voip_framework` when it was not CallKit, `local_notifications` when it added any.
    public var json: JSON {
        var object: JSONObject = [
            "content": ExtensionMessage.content(content).json, "after_expiry": .bool(afterExpiry),
            "voip_reported": .bool(voipReported),
        ]
        if let voipError { object["voip_error"] = voipError.json }
        if voipFramework != .callKit { object["voip_framework"] = voipFramework.json }
        if let acceptedVoIPPayload { object["accepted_voip_payload"] = .object(acceptedVoIPPayload) }
        if !localNotifications.isEmpty { object["local_notifications"] = .array(localNotifications.map(\.json)) }
        return .object(object)
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        let line: JSONObject = try object.field("content")
        guard case .content(let content)? = try? ExtensionMessage(json: .object(line)) else {
            throw JSONFieldError(path: ["content"], expected: "an extension's content line", problem: .found(nil))
        }
        self.content = content
        afterExpiry = try object.field("after_expiry") ?? false
        voipReported = try object.field("voip_reported") ?? false
        voipError = try object.field("voip_error")
        voipFramework = try object.field("voip_framework") ?? .callKit
        acceptedVoIPPayload = try object.field("accepted_voip_payload")
        var locals: [LocalNotification] = []
        if let list = object["local_notifications"], !list.isNull {
            guard let items = list.arrayValue else {
                throw JSONFieldError(
                    path: ["local_notifications"], expected: "an array", problem: .found(list.typeName))
            }
            for (index, item) in items.enumerated() {
                do { locals.append(try LocalNotification(json: item)) } catch {
                    throw error.inside(["local_notifications", String(index)])
                }
            }
        }
        localNotifications = locals
    }
}
