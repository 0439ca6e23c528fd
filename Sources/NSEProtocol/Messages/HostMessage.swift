public import NSEJSON
public import NSEPayload

/// A message from the host to the extension.
public enum HostMessage: Sendable, Equatable {
    /// `didReceive(_:withContentHandler:)`: the notification to process.
    case request(ServiceRequest)
    /// `serviceExtensionTimeWillExpire()`: deliver a best attempt now.
    case timeWillExpire
    /// The completion of `reportNewIncomingVoIPPushPayload`: nil on success, else the error (its framework the one
    /// the extension asked).
    case reportVoIPResult(VoIPReportFailure?)
    /// The answer to an `add-notification`, in the order they came: nil when the notification was added, else
    /// `UNError`'s code. (No identifier: an answer stays a short line whatever the request, so a host's answers to
    /// an extension that does not read them yet fit in its stdin pipe.)
    case addNotificationResult(NotificationAdditionError?)
    /// The host has the extension's content and keeps it whatever happens to either process from now on (a host that
    /// records results has it on disk): what the extension took from its App Group store for it may be let go.
    case contentAccepted

    /// The line sent on the wire (without the newline).
    public var json: JSON {
        switch self {
        case .request(let request):
            var object: JSONObject = [
                "type": "request", "protocol": .int(ExtensionProtocol.version),
                "request_id": .string(request.requestID), "identifier": .string(request.identifier),
                "push_type": .string(request.pushType.rawValue), "container": .string(request.container),
                "budget_ms": .int(request.budgetMilliseconds),
                "deadline_unix_ms": .int(request.deadlineUnixMilliseconds),
                "payload": .object(request.payload),
            ]
            if let mode = request.recordSIP { object["record_sip"] = .string(mode.rawValue) }
            return .object(object)
        case .timeWillExpire:
            return ["type": "time-will-expire"]
        case .reportVoIPResult(let error):
            return ["type": "report-voip-result", "ok": .bool(error == nil), "error": error?.json ?? .null]
        case .addNotificationResult(let error):
            return ["type": "add-notification-result", "ok": .bool(error == nil), "error": error?.json ?? .null]
        case .contentAccepted:
            return ["type": "content-accepted"]
        }
    }

    /// Reads a line sent by the host.
    public init(json: JSON) throws(ProtocolError) {
        do { self = try HostMessage.read(JSONObject(json: json)) } catch { throw ProtocolError(Self.sender, error) }
    }

    private static func read(_ message: JSONObject) throws(JSONFieldError) -> HostMessage {
        switch try message.field("type") as String? {
        case "request":
            // Versions only add messages an extension asks for (docs/protocol.md): any request reads the same way.
            let version = try message.field("protocol") ?? ExtensionProtocol.version
            guard version >= 1 else {
                throw JSONFieldError(
                    path: ["protocol"], expected: "a version, 1 or more", problem: .found(String(version)))
            }
            var request = ServiceRequest(
                requestID: try message.field("request_id"), identifier: try message.field("identifier"),
                pushType: try message.field("push_type") ?? .alert,
                payload: try message.field("payload"), container: try message.field("container"),
                budgetMilliseconds: try message.field("budget_ms") ?? 30_000,
                deadlineUnixMilliseconds: try message.field("deadline_unix_ms") ?? 0)
            request.recordSIP = try message.field("record_sip")
            return .request(request)
        case "time-will-expire":
            return .timeWillExpire
        case "report-voip-result":
            return .reportVoIPResult(
                try message.field("ok") ?? false ? nil : try message.field("error") ?? VoIPReportFailure(.unknown))
        case "add-notification-result":
            // A code this build does not know (a newer host's) is still a refusal.
            let ok: Bool = try message.field("ok") ?? false
            let error = message["error"].flatMap { try? NotificationAdditionError(json: $0) }
            return .addNotificationResult(ok ? nil : error ?? .notificationsNotAllowed)
        case "content-accepted":
            return .contentAccepted
        case let other:
            throw ExtensionProtocol.unknownType(
                other,
                expected: "request, time-will-expire, report-voip-result, add-notification-result or content-accepted")
        }
    }
}
