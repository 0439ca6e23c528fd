/// Why a call ended on the phone: CallKit's `CXCallEndedReason` when the app reports the end
/// (`reportCall(with:endedAt:reason:)`), or this end's own action (`CXEndCallAction`).
public enum CallEndReason: String, Sendable, Equatable {
    /// The caller hung up an answered call (BYE).
    case remoteEnded
    /// The call was never answered here: the caller or the server gave up while it rang (CANCEL without a reason
    /// naming another device), or the user let it ring out.
    case unanswered
    /// Another device of the account answered (CANCEL with `Reason: SIP;cause=200`).
    case answeredElsewhere
    /// Another device declined for everyone (CANCEL with `Reason: SIP;cause=600` or `603`).
    case declinedElsewhere
    /// The call could not go on: the INVITE never came within the wait, the registration failed, the ACK never
    /// came, the connection failed. The app must end the call it reported.
    case failed
    /// The user declined (`CXEndCallAction` before answering): 603 or 486 sent.
    case declined
    /// The user hung up an answered call (`CXEndCallAction`): BYE sent.
    case hungUp

    /// Whether CallKit learns it from the app's `reportCall(with:endedAt:reason:)` (else from a user action).
    public var isReportedByApp: Bool {
        switch self {
        case .remoteEnded, .unanswered, .answeredElsewhere, .declinedElsewhere, .failed: true
        case .declined, .hungUp: false
        }
    }

    /// The reason a CANCEL gives (RFC 3326 `Reason` header, nil when none): another device answered or declined,
    /// or nobody did.
    public static func ofCancel(reason header: String?) -> CallEndReason {
        guard let header else { return .unanswered }
        let fields = header.split(separator: ";").map { $0.trimmingPrefix(" ") }
        guard fields.first.map({ $0.uppercased().hasPrefix("SIP") }) ?? false,
            let cause = fields.first(where: { $0.lowercased().hasPrefix("cause=") })
                .flatMap({ Int($0.dropFirst(6).prefix { $0.isNumber }) })
        else { return .unanswered }
        switch cause {
        case 200: return .answeredElsewhere
        case 600, 603: return .declinedElsewhere
        default: return .unanswered
        }
    }
}
