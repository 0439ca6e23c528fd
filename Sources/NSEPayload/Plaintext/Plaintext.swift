public import NSEJSON
import NSESystem

/// The decrypted content of an envelope (schema version 1, see docs/envelope.md).
public enum Plaintext: Sendable, Equatable {
    case message(Message)
    case call(Call)

    /// The schema version this build reads and writes.
    public static let schemaVersion: Int64 = 1

    /// A chat message.
    public struct Message: Sendable, Equatable {
        public var from: String
        public var displayName: String?
        public var text: String
        public var subject: String?
        public var chatRoom: String?
        public var sentAt: Int64?
        /// Files sent with the message, by reference (photos, voice notes): at most ``Attachment/limit``.
        public var attachments: [Attachment] = []
    }

    /// A VoIP call offer.
    public struct Call: Sendable, Equatable {
        public enum HandleType: String, Sendable { case generic, phoneNumber, emailAddress }
        public var callUUID: String
        public var from: String
        public var displayName: String?
        public var handleType: HandleType
        public var video: Bool
        public var sentAt: Int64?
        /// The SIP Call-ID of the INVITE the offer stands for (`sip_call_id`): the app fetches that INVITE once it
        /// has reported the call. Nil for an offer that comes with no SIP call.
        public var sipCallID: String? = nil
    }

    /// The `type` value, for results.
    public var typeName: String {
        switch self {
        case .message: "message"
        case .call: "call"
        }
    }

    /// Validates a decrypted document against the schema.
    public init(_ bytes: [UInt8]) throws(PlaintextError) {
        let document: JSON
        do {
            document = try JSON.parse(bytes, options: JSONParseOptions(maxDepth: 8, requireObject: true))
        } catch {
            // The parser's message can quote the plaintext; keep only its position.
            throw PlaintextError(
                .notJSON,
                "the decrypted content is not a JSON object (\(error.code.rawValue) at line \(error.line), column \(error.column))"
            )
        }
        guard let object = document.objectValue else {
            throw PlaintextError(.notJSON, "the decrypted content is not a JSON object")
        }
        try self.init(object)
    }

    /// Validates a parsed document against the schema.
    public init(_ object: JSONObject) throws(PlaintextError) {
        func string(_ key: String, required: Bool) throws(PlaintextError) -> String? {
            guard let value = object[key], !value.isNull else {
                if required { throw PlaintextError(.schema, "the content has no \"\(key)\"") }
                return nil
            }
            guard let text = value.stringValue else {
                throw PlaintextError(.schema, "\"\(key)\" is a \(value.typeName), not a string")
            }
            return text
        }
        if let version = object["schema"], version.intValue != Plaintext.schemaVersion {
            throw PlaintextError(
                .schema,
                "content schema \(version.serialized()) is not supported (this build reads \(Plaintext.schemaVersion))")
        }
        var sentAt: Int64?
        if let sent = try string("sent_at", required: false) {
            guard let seconds = SystemClock.parseTimestamp(sent) else {
                throw PlaintextError(.schema, "\"sent_at\" is not an RFC 3339 timestamp")
            }
            sentAt = seconds
        }
        switch try string("type", required: true) {
        case "message":
            var attachments: [Attachment] = []
            if let list = object["attachments"], !list.isNull {
                guard let items = list.arrayValue else {
                    throw PlaintextError(.schema, "\"attachments\" is a \(list.typeName), not an array")
                }
                guard items.count <= Attachment.limit else {
                    throw PlaintextError(.schema, "a message carries at most \(Attachment.limit) attachments")
                }
                for (index, item) in items.enumerated() { attachments.append(try Attachment(item, index: index)) }
            }
            self = .message(
                Message(
                    from: try string("from", required: true)!, displayName: try string("display_name", required: false),
                    text: try string("text", required: true)!, subject: try string("subject", required: false),
                    chatRoom: try string("chat_room", required: false), sentAt: sentAt, attachments: attachments))
        case "call":
            let handle = try string("handle_type", required: false) ?? "generic"
            guard let handleType = Call.HandleType(rawValue: handle) else {
                throw PlaintextError(.schema, "\"handle_type\" must be generic, phoneNumber or emailAddress")
            }
            var video = false
            if let value = object["video"] {
                guard let flag = value.boolValue else {
                    throw PlaintextError(.schema, "\"video\" is a \(value.typeName), not a boolean")
                }
                video = flag
            }
            let uuid = try string("call_uuid", required: true)!
            guard Plaintext.isUUID(uuid) else { throw PlaintextError(.schema, "\"call_uuid\" is not a UUID") }
            self = .call(
                Call(
                    callUUID: uuid, from: try string("from", required: true)!,
                    displayName: try string("display_name", required: false), handleType: handleType, video: video,
                    sentAt: sentAt, sipCallID: try string("sip_call_id", required: false)))
        case _?:
            // The value is not quoted: it is the sender's, inside the sealed content.
            throw PlaintextError(.schema, "\"type\" is neither \"message\" nor \"call\"")
        case nil:
            throw PlaintextError(.schema, "the content has no \"type\"")
        }
    }

    /// Whether `text` is a UUID in its 8-4-4-4-12 hex form.
    public static func isUUIDText(_ text: String) -> Bool { isUUID(text) }

    static func isUUID(_ text: String) -> Bool {
        let characters = Array(text.utf8)
        guard characters.count == 36 else { return false }
        for (index, character) in characters.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if character != 0x2D { return false }
            } else if !((0x30...0x39).contains(character) || (0x41...0x46).contains(character)
                || (0x61...0x66).contains(character))
            {
                return false
            }
        }
        return true
    }
}

/// Why decrypted content could not be used. Never quotes the plaintext.
public struct PlaintextError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable {
        case notJSON = "plaintext-not-json"
        case schema = "plaintext-schema"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Helpers for the SIP URIs carried in payloads and plaintexts.
public enum SIPAddressText {
    /// The user part of a SIP URI (`sip:alice@example.org` → `alice`), or the text itself when it has none.
    public static func user(of uri: String) -> String {
        var text = Substring(uri)
        if let open = text.firstIndex(of: "<"), let close = text[open...].firstIndex(of: ">") {
            text = text[text.index(after: open)..<close]
        }
        for scheme in ["sips:", "sip:", "tel:"] where text.lowercased().hasPrefix(scheme) {
            text = text.dropFirst(scheme.count)
        }
        if let at = text.firstIndex(of: "@") { text = text[..<at] }
        if let semicolon = text.firstIndex(of: ";") { text = text[..<semicolon] }
        return text.isEmpty ? uri : String(text)
    }
}
