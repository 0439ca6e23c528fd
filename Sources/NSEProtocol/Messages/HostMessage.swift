public import NSEJSON
public import NSEPayload

/// A message from the host to the extension.
public enum HostMessage: Sendable, Equatable {
    /// `didReceive(_:withContentHandler:)`: the notification to process.
    case request(ServiceRequest)
    /// `serviceExtensionTimeWillExpire()`: deliver a best attempt now.
    case timeWillExpire
    /// The completion of `reportNewIncomingVoIPPushPayload`: nil on success, else the error.
    case reportVoIPResult(VoIPReportError?)

    /// The line sent on the wire (without the newline).
    public var json: JSON {
        switch self {
        case .request(let request):
            return [
                "type": "request", "protocol": .int(ExtensionProtocol.version),
                "request_id": .string(request.requestID),
                "push_type": .string(request.pushType.rawValue), "container": .string(request.container),
                "budget_ms": .int(request.budgetMilliseconds),
                "deadline_unix_ms": .int(request.deadlineUnixMilliseconds),
                "payload": .object(request.payload),
            ]
        case .timeWillExpire:
            return ["type": "time-will-expire"]
        case .reportVoIPResult(let error):
            return ["type": "report-voip-result", "ok": .bool(error == nil), "error": error?.json ?? .null]
        }
    }

    /// Reads a line sent by the host.
    public init(json: JSON) throws(ProtocolError) {
        switch json["type"]?.stringValue {
        case "request":
            guard let payload = json["payload"]?.objectValue, let container = json["container"]?.stringValue,
                let requestID = json["request_id"]?.stringValue
            else { throw ProtocolError("a request needs payload, container and request_id") }
            if let version = json["protocol"]?.intValue, version != ExtensionProtocol.version {
                throw ProtocolError(
                    "protocol version \(version) is not supported (this extension speaks \(ExtensionProtocol.version))")
            }
            self = .request(
                ServiceRequest(
                    requestID: requestID, pushType: PushType(rawValue: json["push_type"]?.stringValue ?? "") ?? .alert,
                    payload: payload, container: container, budgetMilliseconds: json["budget_ms"]?.intValue ?? 30_000,
                    deadlineUnixMilliseconds: json["deadline_unix_ms"]?.intValue ?? 0))
        case "time-will-expire":
            self = .timeWillExpire
        case "report-voip-result":
            if json["ok"]?.boolValue == true {
                self = .reportVoIPResult(nil)
            } else {
                let code = json["error"]?["code"]?.intValue.flatMap { VoIPReportError(rawValue: Int($0)) } ?? .unknown
                self = .reportVoIPResult(code)
            }
        case let other:
            throw ProtocolError(
                "unknown host message type \(other.map { "\"\(ProtocolError.printable($0))\"" } ?? "(none)")")
        }
    }
}
