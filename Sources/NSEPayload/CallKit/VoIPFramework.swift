public import NSEJSON

/// The framework an app reports its calls through (docs/voip.md): CallKit's `CXProvider`, or LiveCommunicationKit's
/// `ConversationManager` (iOS 17.4). Both take the extension's `reportNewIncomingVoIPPushPayload` and the app's
/// report of the incoming call; the rules around them (report or be terminated, strikes) are the same.
public enum VoIPFramework: String, Sendable, Equatable, CaseIterable, JSONConvertible {
    case callKit = "CallKit"
    case liveCommunicationKit = "LiveCommunicationKit"

    /// Reads `--voip-framework`: the name, in any case, or its short form (`callkit`, `lck`).
    public init?(option text: String) {
        switch text.lowercased() {
        case "callkit", "cx": self = .callKit
        case "livecommunicationkit", "lck": self = .liveCommunicationKit
        default: return nil
        }
    }

    public static var jsonKind: String { "\"CallKit\" or \"LiveCommunicationKit\"" }
}
