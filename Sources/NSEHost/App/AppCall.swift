import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem

/// "The app handles the call just like any incoming VoIP call" (Apple's E2EE VoIP article, step 4): once the
/// app reported a call whose push named a SIP Call-ID, and the device has a SIP account, the app's process
/// (`nse-app`) re-REGISTERs, takes that INVITE, rings, and does what the device's user does, until the call ends.
struct AppCall {
    var device: Device

    /// The app's process: `$NSE_APP`, else `nse-app` beside the running executable, else `nse-app` on `PATH`.
    static func command() -> [String] {
        ChildProcess.sibling("nse-app", overriddenBy: "NSE_APP")
    }

    /// Whether the app follows the call `launch` reported for `payload`: a reported call, a Call-ID, an account.
    func follows(_ launch: AppLaunch, payload: JSONObject) -> String? {
        guard launch.outcome == .reported, device.config.sip != nil else { return nil }
        return CallRecord.callID(in: payload)
    }

    /// Follows the call to its end; times are from `pushStart` (monotonic nanoseconds).
    func follow(
        callID: String, route: CallRecord.Route, launch: AppLaunch, launchedAt: UInt64, pushStart: UInt64
    ) -> CallRecord {
        var record = CallRecord(callID: callID, route: route, report: launch.report)
        func milliseconds(_ at: UInt64) -> Double { Double(at &- pushStart) / 1_000_000 }
        record.timeline.append(("reported", milliseconds(launchedAt) + launch.wallMilliseconds))
        // What the user does: as the app's handler said for this call (version 2), else the device's settings
        // (`nse device set --call-action …`).
        let plan = launch.callSettings ?? device.config.voip.call
        let request: JSON = ["device": .string(device.directory), "call_id": .string(callID), "plan": plan.json]
        var session = AppCallMachine(request: request, bound: AppCall.bound(of: plan))
        _ = ProcessDriver.run(AppCall.command(), session: &session)
        record.timeline += session.steps.map { ($0.step, milliseconds($0.at)) }
        if let outcome = session.outcome {
            record.endReason = outcome["end_reason"]?.stringValue.map {
                CallRecord.endReason($0, in: launch.report?.framework ?? .callKit)
            }
            record.sipStatus = outcome["sip_status"]?.intValue.map(Int.init)
            record.video = outcome["video"]?.boolValue
            record.registrationStatus = outcome["registration_status"]?.intValue.map(Int.init)
        }
        if case .failed(let why) = session.phase { record.failure = why }
        return record
    }

    /// How long the app's process may take: the INVITE's wait, the ring, the ACK's wait, the call, and a margin.
    static func bound(of plan: CallSettings) -> Double {
        plan.inviteTimeout + max(plan.answerAfter, plan.ringTimeout) + plan.ackTimeout + plan.hangupAfter + 10
    }
}
