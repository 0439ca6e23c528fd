public import NSEJSON

/// What the app reports to CallKit for an incoming call (`CXCallUpdate` + the call's UUID).
public struct CallReport: Sendable, Equatable {
    public enum HandleType: String, Sendable { case generic, phoneNumber, emailAddress }

    public var uuid: String
    public var handleType: HandleType
    public var handleValue: String
    public var localizedCallerName: String?
    public var hasVideo: Bool
    public var supportsHolding: Bool
    public var supportsDTMF: Bool
    public var supportsGrouping: Bool
    public var supportsUngrouping: Bool

    public init(
        uuid: String, handleType: HandleType, handleValue: String, localizedCallerName: String?, hasVideo: Bool,
        supportsHolding: Bool = true, supportsDTMF: Bool = true, supportsGrouping: Bool = false,
        supportsUngrouping: Bool = false
    ) {
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
        ]
    }

    /// Validates an app's report; the error names the first field that is wrong.
    public init(json: JSON) throws(CallReportError) {
        guard let object = json.objectValue else {
            throw CallReportError("the call report is a \(json.typeName), not an object")
        }
        guard let uuid = object["uuid"]?.stringValue, Plaintext.isUUID(uuid) else {
            throw CallReportError("\"uuid\" is missing or not a UUID")
        }
        guard let handle = object["remote_handle"]?.objectValue else {
            throw CallReportError("\"remote_handle\" is missing or not an object")
        }
        guard let typeName = handle["type"]?.stringValue, let type = HandleType(rawValue: typeName) else {
            throw CallReportError("\"remote_handle.type\" must be generic, phoneNumber or emailAddress")
        }
        guard let value = handle["value"]?.stringValue, !value.isEmpty else {
            throw CallReportError("\"remote_handle.value\" is missing or empty")
        }
        var name: String?
        if let caller = object["localized_caller_name"], !caller.isNull {
            guard let text = caller.stringValue else {
                throw CallReportError("\"localized_caller_name\" is not a string")
            }
            name = text
        }
        func flag(_ key: String, _ fallback: Bool) throws(CallReportError) -> Bool {
            guard let value = object[key], !value.isNull else { return fallback }
            guard let bool = value.boolValue else {
                throw CallReportError("\"\(key)\" is a \(value.typeName), not a boolean")
            }
            return bool
        }
        self.init(
            uuid: uuid, handleType: type, handleValue: value, localizedCallerName: name,
            hasVideo: try flag("has_video", false),
            supportsHolding: try flag("supports_holding", true), supportsDTMF: try flag("supports_dtmf", true),
            supportsGrouping: try flag("supports_grouping", false),
            supportsUngrouping: try flag("supports_ungrouping", false))
    }
}

/// A call report that does not follow the schema.
public struct CallReportError: Error, Sendable, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// `CXErrorCodeNotificationServiceExtensionError`: why `reportNewIncomingVoIPPushPayload` failed.
public enum VoIPReportError: Int, Sendable, Equatable {
    case unknown = 0
    case invalidClientProcess = 1
    case missingNotificationFilteringEntitlement = 2

    /// The error's name, as Swift spells the case.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .invalidClientProcess: "invalidClientProcess"
        case .missingNotificationFilteringEntitlement: "missingNotificationFilteringEntitlement"
        }
    }

    /// `{"domain", "code", "name"}`.
    public var json: JSON {
        ["domain": "CXErrorDomainNotificationServiceExtension", "code": .int(Int64(rawValue)), "name": .string(name)]
    }
}
