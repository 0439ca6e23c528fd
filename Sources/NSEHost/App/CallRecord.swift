public import NSEJSON
public import NSEPayload

/// The call the app took after reporting it (the result's `call`): from the re-REGISTER to the end, timed from the
/// push (docs/voip.md, "The whole call").
public struct CallRecord: Sendable, Equatable, JSONEncodable {
    /// How the call reached the app.
    public enum Route: String, Sendable, JSONEncodable {
        /// A PushKit VoIP push.
        case pushKit = "pushkit"
        /// An alert push whose extension decrypted a call offer and reported it.
        case notificationServiceExtension = "nse-escalation"
    }

    /// The SIP Call-ID of the INVITE the push announced.
    public var callID: String
    public var route: Route
    /// The steps of the call, in order, in milliseconds since the push came in (`reported`, `registered`,
    /// `invite_received`, `ringing`, `answered`, `confirmed`, `ended`, …).
    public var timeline: [(step: String, milliseconds: Double)] = []
    /// CallKit's end reason (LiveCommunicationKit's, for a call reported to it), or this end's action (`declined`,
    /// `hungUp`); nil when the app's process failed.
    public var endReason: String?
    /// The SIP status that ended the call on the phone's side.
    public var sipStatus: Int?
    /// Whether the INVITE offered video.
    public var video: Bool?
    /// The status of the app's re-REGISTER.
    public var registrationStatus: Int?
    /// The call the app reported to CallKit.
    public var report: CallReport?
    /// Why the app's process could not follow the call (it could not start, never ended the call…).
    public var failure: String?
    /// For a version-2 handler: whether the app ended the CallKit call it reported once the call was over.
    public var callKit: CallKitEnd?

    /// How the app ended its CallKit call (the result's `call.callkit`): told how the call ended, a version-2
    /// handler must answer `{"version": 2, "ended": {"uuid", "reason"}}`, as the app calls
    /// `reportCall(with:endedAt:reason:)` (or requests a `CXEndCallAction` for its own user's end).
    public struct CallKitEnd: Sendable, Equatable, JSONEncodable {
        /// Whether it ended the call it reported (the same UUID).
        public var ended: Bool
        /// The reason it gave.
        public var reason: String?
        /// Why the end does not count, when it does not.
        public var failure: String?

        public var json: JSON { ["ended": .bool(ended), "reason": reason.json, "failure": failure.json] }
    }

    public static func == (a: CallRecord, b: CallRecord) -> Bool {
        a.json == b.json
    }

    /// `{"call_id", "route", "timeline_ms": {step: ms}, "end_reason", "sip_status", "video", "registration_status",
    /// "report"}`, and `failure` when there is one.
    public var json: JSON {
        var timelineObject: JSONObject = [:]
        for entry in timeline where timelineObject[entry.step] == nil {
            timelineObject[entry.step] = .double(NotificationResult.rounded(entry.milliseconds))
        }
        var object: JSONObject = [
            "call_id": .string(callID), "route": route.json, "timeline_ms": .object(timelineObject),
            "end_reason": endReason.json, "sip_status": sipStatus.json, "video": video.json,
            "registration_status": registrationStatus.json, "report": report.json,
        ]
        if let failure { object["failure"] = .string(failure) }
        if let callKit { object["callkit"] = callKit.json }
        return .object(object)
    }

    /// An end reason as the framework the call was reported to names it: CallKit's `CXCallEndedReason`, or
    /// LiveCommunicationKit's `Conversation.EndedReason`, which says `joinedElsewhere` where CallKit says
    /// `answeredElsewhere` (the others are spelled alike; `declined` and `hungUp` are the user's own end action).
    static func endReason(_ reason: String, in framework: VoIPFramework) -> String {
        guard framework == .liveCommunicationKit else { return reason }
        return reason == "answeredElsewhere" ? "joinedElsewhere" : reason
    }

    /// The SIP Call-ID a VoIP payload announces: Flexisip's `call-id`, at the top (alert form, and what the
    /// extension's escalation passes on) or in `aps` (VoIP form).
    public static func callID(in payload: JSONObject) -> String? {
        let value = payload["call-id"]?.stringValue ?? payload["aps"]?.objectValue?["call-id"]?.stringValue
        return value.flatMap { $0.isEmpty ? nil : $0 }
    }
}
