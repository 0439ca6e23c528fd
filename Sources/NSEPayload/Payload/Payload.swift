public import NSEJSON

/// A validated push payload: the whole JSON document, with typed views of the keys nse understands.
/// Unknown keys are kept untouched in ``root``.
public struct Payload: Sendable, Equatable, JSONEncodable {
    /// The whole document, in its original key order.
    public var root: JSONObject
    /// The `aps` dictionary as iOS reads it.
    public var aps: APS
    /// Notes about keys iOS would ignore.
    public var warnings: [String]

    /// Reads a parsed document.
    public init(root: JSONObject) {
        self.root = root
        var warnings: [String] = []
        if let value = root["aps"] {
            if let object = value.objectValue {
                aps = APS(object, warnings: &warnings)
            } else {
                aps = APS()
                warnings.append("aps is a \(value.typeName), not a dictionary: iOS ignores it")
            }
        } else {
            aps = APS()
        }
        self.warnings = warnings
    }

    private func text(_ keys: String...) -> String? {
        for key in keys {
            if let value = root[key]?.stringValue, !value.isEmpty { return value }
        }
        return nil
    }

    /// The SIP Call-ID of the held message: the seed's `call_id`, Flexisip's `call-id`, or `aps.call-id` (voip).
    public var callID: String? { text("call_id", "call-id") ?? root["aps"]?["call-id"]?.stringValue }
    /// The chat room a group-chat invitation is for (`chat_room_addr` / `chat-room-addr`).
    public var chatRoomAddress: String? { text("chat_room_addr", "chat-room-addr") }
    /// The sender (`from-uri`).
    public var fromURI: String? { text("from-uri", "from_uri") }
    /// The sender's display name (`display-name`).
    public var displayName: String? { text("display-name", "display_name") }
    /// When the server sent the push (`send-time`).
    public var sendTime: String? { text("send-time", "send_time") }
    /// The sealed envelope carried in the payload itself (`enc`).
    public var envelope: String? { text("enc") }
    /// Flexisip's `pn_ttl`.
    public var ttl: Int64? { root["pn_ttl"]?.intValue }
    /// Flexisip's `uuid` (the +sip.instance).
    public var instanceUUID: String? { text("uuid") }
    /// Flexisip's `customPayload`.
    public var customPayload: JSONObject? { root["customPayload"]?.objectValue }

    /// The document as JSON.
    public var json: JSON { .object(root) }
}
