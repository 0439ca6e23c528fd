public import NSEJSON

/// The host/extension protocol (docs/protocol.md): one JSON object per line on the extension's stdin and stdout.
public enum ExtensionProtocol {
    /// The protocol version this build speaks.
    public static let version: Int64 = 1
    /// The longest line either side accepts.
    public static let maxLineBytes = 64 * 1024
}

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
                "type": "request", "protocol": .int(ExtensionProtocol.version), "request_id": .string(request.requestID),
                "push_type": .string(request.pushType.rawValue), "container": .string(request.container),
                "budget_ms": .int(request.budgetMilliseconds), "deadline_unix_ms": .int(request.deadlineUnixMilliseconds),
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
                throw ProtocolError("protocol version \(version) is not supported (this extension speaks \(ExtensionProtocol.version))")
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
            throw ProtocolError("unknown host message type \(other.map { "\"\(ProtocolError.printable($0))\"" } ?? "(none)")")
        }
    }
}

/// What the extension is asked to process.
public struct ServiceRequest: Sendable, Equatable {
    public var requestID: String
    public var pushType: PushType
    /// The notification's payload (`request.content.userInfo`, with `aps`).
    public var payload: JSONObject
    /// The App Group container (the device folder).
    public var container: String
    public var budgetMilliseconds: Int64
    /// When the budget runs out, in Unix milliseconds.
    public var deadlineUnixMilliseconds: Int64

    public init(
        requestID: String, pushType: PushType, payload: JSONObject, container: String, budgetMilliseconds: Int64,
        deadlineUnixMilliseconds: Int64
    ) {
        self.requestID = requestID
        self.pushType = pushType
        self.payload = payload
        self.container = container
        self.budgetMilliseconds = budgetMilliseconds
        self.deadlineUnixMilliseconds = deadlineUnixMilliseconds
    }
}

/// A message from the extension to the host.
public enum ExtensionMessage: Sendable, Equatable {
    /// `contentHandler(content)`: the content to show; the first one ends the request.
    case content(DeliveredContent)
    /// `CXProvider.reportNewIncomingVoIPPushPayload(payload)`: the host answers with `report-voip-result`.
    case reportVoIP(JSONObject)

    /// The line sent on the wire (without the newline).
    public var json: JSON {
        switch self {
        case .content(let delivered):
            var object: JSONObject = ["type": "content", "content": .object(delivered.content)]
            if delivered.isFallback { object["fallback"] = true }
            if let reason = delivered.reason { object["reason"] = .string(reason) }
            if let info = delivered.info { object["info"] = .object(info) }
            return .object(object)
        case .reportVoIP(let payload):
            return ["type": "report-voip", "payload": .object(payload)]
        }
    }

    /// Reads a line sent by an extension.
    public init(json: JSON) throws(ProtocolError) {
        switch json["type"]?.stringValue {
        case "content":
            guard let content = json["content"]?.objectValue else {
                throw ProtocolError("a content message needs a \"content\" object")
            }
            self = .content(
                DeliveredContent(
                    content: content, isFallback: json["fallback"]?.boolValue ?? false,
                    reason: json["reason"]?.stringValue, info: json["info"]?.objectValue))
        case "report-voip":
            guard let payload = json["payload"]?.objectValue else {
                throw ProtocolError("a report-voip message needs a \"payload\" object")
            }
            self = .reportVoIP(payload)
        case let other:
            throw ProtocolError("unknown extension message type \(other.map { "\"\(ProtocolError.printable($0))\"" } ?? "(none)")")
        }
    }
}

/// Content handed to `contentHandler`: an APNs-shaped dictionary (`aps` plus the user-info keys).
public struct DeliveredContent: Sendable, Equatable {
    public var content: JSONObject
    /// The extension says this is its fallback rather than a rewrite.
    public var isFallback: Bool
    /// Why, in a few words (machine-readable prefix first, e.g. `envelope-wrong-key: …`).
    public var reason: String?
    /// Diagnostics the host copies into the result (`extension.info`).
    public var info: JSONObject?

    public init(content: JSONObject, isFallback: Bool = false, reason: String? = nil, info: JSONObject? = nil) {
        self.content = content
        self.isFallback = isFallback
        self.reason = reason
        self.info = info
    }
}

/// A protocol line that makes no sense.
public struct ProtocolError: Error, Sendable, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }

    /// A protocol field as an error may name it: at most 32 characters, anything but printable ASCII shown as `?`
    /// (the error becomes a result's `reason`: it must stay one line and never carry a terminal escape).
    static func printable(_ field: String) -> String {
        String(String.UnicodeScalarView(field.unicodeScalars.prefix(32).map { $0.value >= 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }
}
