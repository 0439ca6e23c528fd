public import NSEJSON

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
            throw ProtocolError(
                "unknown extension message type \(other.map { "\"\(ProtocolError.printable($0))\"" } ?? "(none)")")
        }
    }
}
