public import NSEJSON

/// Why the system refused an extension's `reportNewIncomingVoIPPushPayload`. CallKit names the conditions
/// (`CXErrorCodeNotificationServiceExtensionError`, domain `CXErrorDomainNotificationServiceExtension`);
/// LiveCommunicationKit only documents that its method throws "when the system disallows a conversation", with no
/// domain or codes, so on that route nse names the same condition and leaves the domain and code out.
public enum VoIPReportError: Int, Sendable, Equatable, CaseIterable {
    case unknown = 0
    case invalidClientProcess = 1
    case missingNotificationFilteringEntitlement = 2

    /// The condition's name, as CallKit's Swift spelling of the case.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .invalidClientProcess: "invalidClientProcess"
        case .missingNotificationFilteringEntitlement: "missingNotificationFilteringEntitlement"
        }
    }

    /// The condition a name stands for.
    public init?(name: String) {
        guard let error = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = error
    }
}

/// A refused `reportNewIncomingVoIPPushPayload`: the condition, and the framework that refused it.
public struct VoIPReportFailure: Sendable, Equatable, JSONConvertible, CustomStringConvertible {
    public var error: VoIPReportError
    public var framework: VoIPFramework

    public init(_ error: VoIPReportError, framework: VoIPFramework = .callKit) {
        self.error = error
        self.framework = framework
    }

    public static var jsonKind: String { "an object" }

    /// CallKit: `{"framework", "domain", "code", "name"}`. LiveCommunicationKit: the same with `domain` and `code`
    /// null, as Apple documents none.
    public var json: JSON {
        switch framework {
        case .callKit:
            [
                "framework": .string(framework.rawValue), "domain": "CXErrorDomainNotificationServiceExtension",
                "code": .int(Int64(error.rawValue)), "name": .string(error.name),
            ]
        case .liveCommunicationKit:
            ["framework": .string(framework.rawValue), "domain": .null, "code": .null, "name": .string(error.name)]
        }
    }

    /// Read by its `code`, else its `name`: one this build does not know is `unknown`, as a newer iOS's would be to
    /// an older app. Without `framework`, CallKit (what hosts before LiveCommunicationKit sent).
    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        framework = try object.field("framework") ?? .callKit
        if let code: Int = try object.field("code") {
            error = VoIPReportError(rawValue: code) ?? .unknown
        } else {
            error = (try object.field("name") as String?).flatMap(VoIPReportError.init(name:)) ?? .unknown
        }
    }

    /// For a reason: `missingNotificationFilteringEntitlement (2)` on CallKit; on LiveCommunicationKit, which
    /// documents no codes, `LiveCommunicationKit disallowed the conversation (missingNotificationFilteringEntitlement)`.
    public var description: String {
        switch framework {
        case .callKit: "\(error.name) (\(error.rawValue))"
        case .liveCommunicationKit: "LiveCommunicationKit disallowed the conversation (\(error.name))"
        }
    }
}
