public import NSEJSON

/// What the app reports for an incoming call: to CallKit (`CXCallUpdate` + the call's UUID), or to
/// LiveCommunicationKit (`reportNewIncomingConversation(uuid:update:)`: its `Conversation.Update` holds the same facts:
/// the remote member's `Handle`, with `capabilities` video, pausing, playingTones, merging, unmerging).
public struct CallReport: Sendable, Equatable, JSONConvertible {
    /// `CXHandle.HandleType`.
    public enum HandleType: String, Sendable, CaseIterable, JSONConvertible { case generic, phoneNumber, emailAddress }

    public static var jsonKind: String { "an object" }

    public var uuid: String
    public var handleType: HandleType
    public var handleValue: String
    public var localizedCallerName: String?
    public var hasVideo: Bool
    public var supportsHolding: Bool
    public var supportsDTMF: Bool
    public var supportsGrouping: Bool
    public var supportsUngrouping: Bool
    /// The framework it was reported to.
    public var framework: VoIPFramework

    public init(
        uuid: String, handleType: HandleType, handleValue: String, localizedCallerName: String?, hasVideo: Bool,
        supportsHolding: Bool = true, supportsDTMF: Bool = true, supportsGrouping: Bool = false,
        supportsUngrouping: Bool = false, framework: VoIPFramework = .callKit
    ) {
        self.framework = framework
        self.uuid = uuid
        self.handleType = handleType
        self.handleValue = handleValue
        self.localizedCallerName = localizedCallerName
        self.hasVideo = hasVideo
        self.supportsHolding = supportsHolding
        self.supportsDTMF = supportsDTMF
        self.supportsGrouping = supportsGrouping
        self.supportsUngrouping = supportsUngrouping
    }

    /// The documented JSON form (what an app handler prints).
    public var json: JSON {
        [
            "uuid": .string(uuid),
            "remote_handle": ["type": .string(handleType.rawValue), "value": .string(handleValue)],
            "localized_caller_name": .string(localizedCallerName),
            "has_video": .bool(hasVideo),
            "supports_holding": .bool(supportsHolding),
            "supports_dtmf": .bool(supportsDTMF),
            "supports_grouping": .bool(supportsGrouping),
            "supports_ungrouping": .bool(supportsUngrouping),
            "framework": .string(framework.rawValue),
        ]
    }

    /// Validates an app's report; the error names the first field that is wrong.
    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        let uuid: String = try object.field("uuid")
        guard Plaintext.isUUID(uuid) else {
            throw JSONFieldError(path: ["uuid"], expected: "a UUID", problem: .found(nil))
        }
        let type: HandleType = try object.field("remote_handle", "type")
        let value: String = try object.field("remote_handle", "value")
        guard !value.isEmpty else {
            throw JSONFieldError(
                path: ["remote_handle", "value"], expected: "a non-empty string", problem: .found(nil))
        }
        self.init(
            uuid: uuid, handleType: type, handleValue: value,
            localizedCallerName: try object.field("localized_caller_name"),
            hasVideo: try object.field("has_video") ?? false,
            supportsHolding: try object.field("supports_holding") ?? true,
            supportsDTMF: try object.field("supports_dtmf") ?? true,
            supportsGrouping: try object.field("supports_grouping") ?? false,
            supportsUngrouping: try object.field("supports_ungrouping") ?? false,
            framework: try object.field("framework") ?? .callKit)
    }
}
