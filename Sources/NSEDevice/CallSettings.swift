public import NSEJSON

/// How the device's user and app treat a call once the app has reported it (`nse device set --call-action …`):
/// what the user does when the phone rings and after what delays, and how long the app waits for the INVITE.
public struct CallSettings: Sendable, Equatable, JSONConvertible {
    /// What the emulated user does once the phone rings.
    public enum Action: String, Sendable, Equatable, CaseIterable, JSONConvertible {
        /// Answers after the answer delay: 200 OK with a session.
        case answer
        /// Declines after the answer delay: 603 Decline.
        case decline
        /// Is busy: 486 Busy Here after the answer delay.
        case busy
        /// Lets it ring until the caller or the server gives up.
        case ignore
        /// Accepts in CallKit before the INVITE has arrived: the answer is postponed until it comes, then sent at
        /// once (Linphone's guide).
        case answerBeforeInvite = "answer-before-invite"
    }

    /// The ranges each setting is checked against, in seconds (`nse device set` and the config file alike).
    public static let answerAfterRange: ClosedRange<Double> = 0...60
    public static let inviteTimeoutRange: ClosedRange<Double> = 0.1...60
    public static let hangupAfterRange: ClosedRange<Double> = 0...3600

    public var action: Action = .answer
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
            "action": action.json, "answer_after_s": .double(answerAfter), "invite_timeout_s": .double(inviteTimeout),
            "hangup_after_s": .double(hangupAfter), "ring_timeout_s": .double(ringTimeout),
            "ack_timeout_s": .double(ackTimeout),
        ]
    }

    /// Reads the settings; each one left out keeps its default, each one out of its range is refused.
    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        action = try object.field("action") ?? action
        func seconds(_ key: String, _ range: ClosedRange<Double>, _ otherwise: Double) throws(JSONFieldError)
            -> Double
        {
            guard let value: Double = try object.field(key) else { return otherwise }
            guard range.contains(value) else {
                throw JSONFieldError(
                    path: [key],
                    expected: "a number of seconds from \(JSON.double(range.lowerBound).serialized()) to "
                        + JSON.double(range.upperBound).serialized(), problem: .found(JSON.double(value).serialized()))
            }
            return value
        }
        answerAfter = try seconds("answer_after_s", Self.answerAfterRange, answerAfter)
        inviteTimeout = try seconds("invite_timeout_s", Self.inviteTimeoutRange, inviteTimeout)
        hangupAfter = try seconds("hangup_after_s", Self.hangupAfterRange, hangupAfter)
        ringTimeout = try seconds("ring_timeout_s", 0.1...3600, ringTimeout)
        ackTimeout = try seconds("ack_timeout_s", 0.1...64, ackTimeout)
    }
}
