public import NSEJSON
public import NSEPayload

/// A message from the extension to the host.
public enum ExtensionMessage: Sendable, Equatable {
    /// `contentHandler(content)`: the content to show; the first one ends the request.
    case content(DeliveredContent)
    /// `reportNewIncomingVoIPPushPayload(payload)` of CallKit's `CXProvider` or of LiveCommunicationKit's
    /// `ConversationManager` (`"framework"`, CallKit when left out): the host answers with `report-voip-result`.
    case reportVoIP(JSONObject, framework: VoIPFramework = .callKit)
    /// `UNUserNotificationCenter.add(_:)`: a local notification to show now or when its trigger fires; the host
    /// answers with `add-notification-result`.
    case addNotification(NotificationAddition)
    /// Version 2, optional: the process's first line, saying which protocol it speaks and whether it serves more than
    /// one request (a warm process, as iOS keeps an extension's process for the next pushes).
    case hello(ExtensionHello)
    /// Version 2: the instance for the last request is gone (after `content-accepted`); the process waits for the next
    /// request or for end of file.
    case ready

    /// The line sent on the wire (without the newline).
    public var json: JSON {
        switch self {
        case .content(let delivered):
            var object: JSONObject = ["type": "content", "content": .object(delivered.content)]
            if delivered.isFallback { object["fallback"] = true }
            if let reason = delivered.reason { object["reason"] = .string(reason) }
            if let info = delivered.info { object["info"] = .object(info) }
            if !delivered.attachments.isEmpty { object["attachments"] = .array(delivered.attachments.map(\.json)) }
            if let communication = delivered.communication { object["communication"] = communication.json }
            return .object(object)
        case .reportVoIP(let payload, let framework):
            var object: JSONObject = ["type": "report-voip", "payload": .object(payload)]
            if framework != .callKit { object["framework"] = framework.json }
            return .object(object)
        case .addNotification(let addition):
            return addition.json
        case .hello(let hello):
            return [
                "type": "hello", "protocol": .int(hello.protocolVersion),
                "requests": .string(hello.servesMany ? "many" : "one"),
            ]
        case .ready:
            return ["type": "ready"]
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
            var attachments: [DeliveredAttachment] = []
            if let list = message["attachments"], !list.isNull {
                guard let items = list.arrayValue else {
                    throw JSONFieldError(path: ["attachments"], expected: "an array", problem: .found(list.typeName))
                }
                for (index, item) in items.enumerated() {
                    do { attachments.append(try DeliveredAttachment(json: item)) } catch {
                        throw error.inside(["attachments", String(index)])
                    }
                }
            }
            var communication: DeliveredCommunication?
            if let value = message["communication"], !value.isNull {
                do { communication = try DeliveredCommunication(json: value) } catch {
                    throw error.inside(["communication"])
                }
            }
            return .content(
                DeliveredContent(
                    content: try message.field("content"), isFallback: try message.field("fallback") ?? false,
                    reason: try message.field("reason"), info: try message.field("info"), attachments: attachments,
                    communication: communication))
        case "report-voip":
            return .reportVoIP(try message.field("payload"), framework: try message.field("framework") ?? .callKit)
        case "add-notification":
            return .addNotification(try NotificationAddition(json: .object(message)))
        case "hello":
            let version: Int64 = try message.field("protocol")
            guard version >= 1 else {
                throw JSONFieldError(
                    path: ["protocol"], expected: "a version, 1 or more", problem: .found(String(version)))
            }
            let requests: String = try message.field("requests") ?? "one"
            guard requests == "one" || requests == "many" else {
                throw JSONFieldError(
                    path: ["requests"], expected: "\"one\" or \"many\"",
                    problem: .found("\"\(ProtocolError.printable(requests))\""))
            }
            return .hello(ExtensionHello(protocolVersion: version, servesMany: requests == "many"))
        case "ready":
            return .ready
        case let other:
            throw ExtensionProtocol.unknownType(
                other, expected: "content, report-voip, add-notification, hello or ready")
        }
    }
}

/// What an extension says of itself when it starts (`hello`, protocol version 2).
public struct ExtensionHello: Sendable, Equatable {
    /// The protocol version it speaks.
    public var protocolVersion: Int64
    /// Whether its process takes another request after `ready` (else it is always started fresh).
    public var servesMany: Bool

    public init(protocolVersion: Int64 = ExtensionProtocol.version, servesMany: Bool) {
        self.protocolVersion = protocolVersion
        self.servesMany = servesMany
    }
}
