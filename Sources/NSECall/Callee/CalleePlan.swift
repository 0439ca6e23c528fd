public import NSEJSON

/// How the emulated user and app treat a call once it is reported: the user's action and its delays, and how
/// long the app waits for the INVITE (the device's call settings, or a run's).
public struct CalleePlan: Sendable, Equatable, JSONConvertible {
    public var action: UserAction = .answer
    /// Seconds from the first ring to the user's answer (or decline).
    public var answerAfter: Double = 1
    /// Seconds from the report the app waits for the INVITE before it ends the call as `failed`.
    public var inviteTimeout: Double = 10
    /// Seconds the user stays in an answered call before hanging up, if the caller has not.
    public var hangupAfter: Double = 5
    /// Seconds an ignored call rings before the phone gives up (480, `unanswered`), if nobody else does.
    public var ringTimeout: Double = 120
    /// Seconds the app waits for the ACK of its 200 before it gives up on the call (64·T1).
    public var ackTimeout: Double = 32

    public init() {}

    public static var jsonKind: String { "an object" }

    public var json: JSON {
        [
            "action": .string(action.rawValue), "answer_after_s": .double(answerAfter),
            "invite_timeout_s": .double(inviteTimeout), "hangup_after_s": .double(hangupAfter),
            "ring_timeout_s": .double(ringTimeout), "ack_timeout_s": .double(ackTimeout),
        ]
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        if let action: String = try object.field("action") {
            guard let known = UserAction(rawValue: action) else {
                throw JSONFieldError(
                    expected: UserAction.allCases.map(\.rawValue).joined(separator: ", "), problem: .found(nil))
            }
            self.action = known
        }
        answerAfter = try object.field("answer_after_s") ?? answerAfter
        inviteTimeout = try object.field("invite_timeout_s") ?? inviteTimeout
        hangupAfter = try object.field("hangup_after_s") ?? hangupAfter
        ringTimeout = try object.field("ring_timeout_s") ?? ringTimeout
        ackTimeout = try object.field("ack_timeout_s") ?? ackTimeout
    }
}
