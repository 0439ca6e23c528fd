public import NSEDevice
public import NSEJSON
public import NSEPayload

/// What happened when iOS launched the app for a VoIP payload (or refused to): the result's `voip.app`.
public struct AppLaunch: Sendable, Equatable, JSONEncodable {
    public enum Outcome: String, Sendable, JSONEncodable {
        /// The app reported the call to CallKit before its deadline.
        case reported
        /// It did not: iOS terminated it and recorded a strike.
        case terminated
        /// It has too many strikes: VoIP payloads are no longer delivered to it.
        case refused
        /// It did not report, and did not have to: iOS said this push need not be reported
        /// (`PKVoIPPushMetadata.mustReport` false, iOS 26.4), so no strike.
        case notReported = "not-reported"
    }

    public internal(set) var outcome: Outcome
    /// The handler's kind: `built-in`, `command` or `url`.
    public internal(set) var handler: String
    /// The call the app reported (the result's `call_report`), nil unless `reported`.
    public internal(set) var report: CallReport?
    /// Why the app was terminated.
    public internal(set) var failure: String?
    public internal(set) var wallMilliseconds: Double = 0
    /// The strikes after this launch.
    public internal(set) var strikes: Int
    public internal(set) var maxStrikes: Int
    /// Why the App Group store could not keep the strikes or the call log, if it could not.
    public internal(set) var storeError: String?
    /// What iOS told the app with the push (`PKVoIPPushMetadata.mustReport`): whether it must report a call.
    public internal(set) var mustReport = true
    /// The handler's protocol version, as its answer shows it: 1 (the report alone), 2 (`{"version": 2, "report",
    /// "call"}`: the report and what the user does with this call).
    public internal(set) var handlerVersion = 1
    /// What a version-2 handler said the user does with this call, over the device's settings.
    public internal(set) var callSettings: CallSettings?

    /// `{"handler", "outcome", "failure", "wall_ms", "strikes", "max_strikes", "must_report"}`, and `store_error` when
    /// there is one.
    public var json: JSON {
        var object: JSONObject = [
            "handler": .string(handler), "outcome": outcome.json, "failure": failure.json,
            "wall_ms": .double(NotificationResult.rounded(wallMilliseconds)), "strikes": strikes.json,
            "max_strikes": maxStrikes.json, "must_report": .bool(mustReport),
        ]
        if handlerVersion != 1 { object["handler_version"] = .int(Int64(handlerVersion)) }
        if let storeError { object["store_error"] = .string(storeError) }
        return .object(object)
    }

    /// One sentence for the result's reason.
    var summary: String {
        switch outcome {
        case .reported:
            report?.framework == .liveCommunicationKit
                ? "the app reported the conversation to LiveCommunicationKit" : "the app reported the call to CallKit"
        case .terminated:
            "the app did not report the call (\(failure ?? "no report")): iOS terminated it, strike \(strikes) of \(maxStrikes)"
        case .notReported:
            "the app did not report the call (\(failure ?? "no report")), which this push allowed (mustReport false): no strike"
        case .refused:
            "VoIP payloads are no longer delivered to this app after \(strikes) strikes (reset with `nse device reset-voip`)"
        }
    }
}
