public import NSEJSON
public import NSEPayload

/// The iOS release a device runs (`nse device set --ios-version 11.4`): the rules that changed between releases
/// follow it. Below iOS 12, an extension whose process has not answered within 1 s of its start is killed and the
/// notification shown as sent (Linphone's iOS guide).
public struct IOSVersion: Sendable, Equatable, Comparable, CustomStringConvertible, JSONConvertible {
    public var major: Int
    public var minor: Int

    /// The release devices run unless told otherwise.
    public static let current = IOSVersion(major: 26, minor: 1)
    /// The oldest release nse models: the Notification Service Extension came with iOS 10.
    public static let oldest = IOSVersion(major: 10, minor: 0)
    public static var jsonKind: String { "an iOS version such as \"17.4\" (10.0 or later)" }

    public init(major: Int, minor: Int = 0) {
        self.major = major
        self.minor = minor
    }

    /// Reads `MAJOR[.MINOR[.PATCH]]` (the patch is ignored); nil for anything else or a release before iOS 10.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count),
            parts.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(\.isASCII) }),
            let major = Int(parts[0]), let minor = parts.count > 1 ? Int(parts[1]) : 0,
            parts.count < 3 || Int(parts[2]) != nil
        else { return nil }
        self.init(major: major, minor: minor)
        guard self >= Self.oldest, major < 100 else { return nil }
    }

    public init(json: JSON) throws(JSONFieldError) {
        guard case .string(let text) = json, let version = IOSVersion(text) else {
            throw JSONFieldError(expected: Self.jsonKind, butGot: json)
        }
        self = version
    }

    public var json: JSON { .string(description) }
    public var description: String { "\(major).\(minor)" }

    /// How long a freshly started extension process has to answer before it is killed, in seconds; nil when the
    /// release puts no such limit (iOS 12 and later).
    public var extensionStartLimit: Double? { major < 12 ? 1 : nil }

    /// The first release whose apps can report an incoming call through `framework` (CallKit: iOS 10;
    /// LiveCommunicationKit's `ConversationManager`: iOS 17.4).
    private static func firstReleaseReporting(through framework: VoIPFramework) -> IOSVersion {
        switch framework {
        case .callKit: IOSVersion(major: 10)
        case .liveCommunicationKit: IOSVersion(major: 17, minor: 4)
        }
    }

    /// Why an app on this release cannot report calls through `framework`, nil when it can.
    public func conflict(reportingThrough framework: VoIPFramework) -> String? {
        let first = Self.firstReleaseReporting(through: framework)
        guard self < first else { return nil }
        return "\(framework.rawValue) needs iOS \(first) or later; the device runs iOS \(self)"
    }

    /// The first release whose extensions can hand a call offer to `framework`'s `reportNewIncomingVoIPPushPayload`
    /// (CallKit's `CXProvider`: iOS 14.5; LiveCommunicationKit's `ConversationManager`: iOS 17.4). An extension
    /// that calls it on an older release calls a method that is not there.
    public static func firstReleaseEscalating(through framework: VoIPFramework) -> IOSVersion {
        switch framework {
        case .callKit: IOSVersion(major: 14, minor: 5)
        case .liveCommunicationKit: IOSVersion(major: 17, minor: 4)
        }
    }

    public static func < (lhs: IOSVersion, rhs: IOSVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}
