import FoundationEssentials

/// The entitlements of an app and its extension as Xcode writes them (`*.entitlements`, a property list), as far as
/// notifications care.
public struct Entitlements: Sendable, Equatable {
    public var appGroups: [String] = []
    /// As written: `$(AppIdentifierPrefix)` is the team's, filled in by whoever knows it (``keychainAccessGroups(team:)``).
    public var keychainAccessGroups: [String] = []
    public var filtering = false
    public var communication = false
    public var timeSensitive = false
    public var criticalAlerts = false

    private struct Document: Decodable {
        var appGroups: [String]?
        var keychainAccessGroups: [String]?
        var filtering: Bool?
        var communication: Bool?
        var timeSensitive: Bool?
        var criticalAlerts: Bool?

        enum CodingKeys: String, CodingKey {
            case appGroups = "com.apple.security.application-groups"
            case keychainAccessGroups = "keychain-access-groups"
            case filtering = "com.apple.developer.usernotifications.filtering"
            case communication = "com.apple.developer.usernotifications.communication"
            case timeSensitive = "com.apple.developer.usernotifications.time-sensitive"
            case criticalAlerts = "com.apple.developer.usernotifications.critical-alerts"
        }
    }

    public init() {}

    /// Reads an `.entitlements` property list; keys other than the notification ones are ignored.
    public init(contentsOf path: String) throws(ExtensionBuildError) {
        let document = try PropertyListFile.decode(Document.self, at: path) {
            "not an entitlements property list (\(Self.reason($0)))"
        }
        appGroups = document.appGroups ?? []
        keychainAccessGroups = document.keychainAccessGroups ?? []
        filtering = document.filtering ?? false
        communication = document.communication ?? false
        timeSensitive = document.timeSensitive ?? false
        criticalAlerts = document.criticalAlerts ?? false
    }

    /// The keychain access groups with Xcode's `$(AppIdentifierPrefix)` and `$(TeamIdentifierPrefix)` made `TEAMID.`,
    /// as the signing fills them in.
    public func keychainAccessGroups(team: String) -> [String] {
        keychainAccessGroups.map {
            $0.replacing("$(AppIdentifierPrefix)", with: team + ".")
                .replacing("$(TeamIdentifierPrefix)", with: team + ".")
        }
    }

    /// Which key had the wrong kind, without its value.
    private static func reason(_ error: any Error) -> String {
        guard case DecodingError.typeMismatch(_, let context) = error, !context.codingPath.isEmpty else {
            return "not a property list"
        }
        return "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
    }
}
