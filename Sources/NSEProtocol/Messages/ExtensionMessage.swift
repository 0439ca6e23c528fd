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
        do { self = try ExtensionMessage.read(JSONObject(json: json)) } catch {
            throw ProtocolError(Self.sender, error)
        }
    }

    private static func read(_ message: JSONObject) throws(JSONFieldError) -> ExtensionMessage {
        switch try message.field("type") as String? {
        case "content":
            return .content(
                DeliveredContent(
                    content: try message.field("content"), isFallback: try message.field("fallback") ?? false,
                    reason: try message.field("reason"), info: try message.field("info")))
        case "report-voip":
            return .reportVoIP(try message.field("payload"))
        case let other:
            throw ExtensionProtocol.unknownType(other, expected: "content or report-voip")
        }
    }
}
