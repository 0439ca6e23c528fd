import NSEJSON
import NSEPayload
import Testing

@testable import NSEHost

/// The host's side of the app's process for a call: its request, its steps timed as they are read, its end.
@Suite struct AppCallMachineTests {
    @Test func sendsTheRequestThenTimesEachStepUntilTheOutcome() {
        var session = AppCallMachine(request: ["call_id": "c1"], bound: 10)
        #expect(session.observe(.launched(at: 0)) == [.write(Array(#"{"call_id":"c1"}"#.utf8) + [0x0A]), .closeStdin])
        #expect(session.deadline == 10_000_000_000)
        _ = session.observe(.line(Array(#"{"step":"registered"}"#.utf8), at: 5_000_000))
        _ = session.observe(.line(Array("not json".utf8), at: 6_000_000))
        _ = session.observe(.line(Array(#"{"step":"ended"}"#.utf8), at: 9_000_000))
        _ = session.observe(.line(Array(#"{"outcome":{"end_reason":"remoteEnded"}}"#.utf8), at: 9_500_000))
        #expect(session.steps.map(\.step) == ["registered", "ended"])
        #expect(session.steps.map(\.at) == [5_000_000, 9_000_000])
        #expect(session.phase == .exiting(until: 1_009_500_000))
        #expect(session.observe(.exited) == [.finish])
        #expect(session.phase == .done)
        #expect(session.outcome?["end_reason"] == "remoteEnded")
    }

    @Test func aProcessThatNeverEndsTheCallIsKilledAtTheBound() {
        var session = AppCallMachine(request: [:], bound: 2)
        _ = session.observe(.launched(at: 0))
        _ = session.observe(.line(Array(#"{"step":"registered"}"#.utf8), at: 1))
        #expect(session.observe(.deadline(now: 2_000_000_000)) == [.kill, .finish])
        #expect(session.phase == .failed("the app's process did not end the call within 2 s"))
    }

    /// The host stopping (`nse serve` on SIGTERM) asks the app to end the call now, and gives it 2 s to do so.
    @Test func aStoppingHostAsksTheAppToEndTheCall() {
        var session = AppCallMachine(request: [:], bound: 200)
        #expect(session.endsOnShutdown)
        _ = session.observe(.launched(at: 0))
        #expect(session.observe(.hostStopping(at: 1_000_000_000)) == [.terminate])
        #expect(session.deadline == 3_000_000_000)
        _ = session.observe(
            .line(Array(#"{"outcome":{"end_reason":"failed","sip_status":480}}"#.utf8), at: 1_100_000_000))
        #expect(session.observe(.exited) == [.finish])
        #expect(session.outcome?["sip_status"] == 480)
    }

    @Test func anErrorOrAnExitWithoutOutcomeIsAFailure() {
        var failing = AppCallMachine(request: [:], bound: 2)
        _ = failing.observe(.launched(at: 0))
        _ = failing.observe(.line(Array(#"{"error":"the device has no SIP account"}"#.utf8), at: 1))
        #expect(failing.observe(.exited) == [.finish])
        #expect(failing.phase == .failed("the device has no SIP account"))
        var silent = AppCallMachine(request: [:], bound: 2)
        _ = silent.observe(.launched(at: 0))
        _ = silent.observe(.exited)
        #expect(silent.phase == .failed("the app's process exited without ending the call"))
        var missing = AppCallMachine(request: [:], bound: 2)
        #expect(missing.observe(.launchFailed("no such file")) == [.finish])
        #expect(missing.phase == .failed("the app's process could not start: no such file"))
    }

    @Test func theCallIDComesFromEitherFlexisipForm() {
        #expect(CallRecord.callID(in: ["aps": ["call-id": "a"]]) == "a")
        #expect(CallRecord.callID(in: ["call-id": "b", "aps": [:]]) == "b")
        #expect(CallRecord.callID(in: ["call-id": ""]) == nil)
        #expect(CallRecord.callID(in: ["aps": ["alert": "x"]]) == nil)
    }

    /// LiveCommunicationKit's `Conversation.EndedReason` says `joinedElsewhere` where CallKit says
    /// `answeredElsewhere`; the other reasons are spelled alike.
    @Test func endReasonsAreNamedAsTheFrameworkNamesThem() {
        #expect(CallRecord.endReason("answeredElsewhere", in: .liveCommunicationKit) == "joinedElsewhere")
        #expect(CallRecord.endReason("answeredElsewhere", in: .callKit) == "answeredElsewhere")
        for reason in ["remoteEnded", "unanswered", "declinedElsewhere", "failed", "declined", "hungUp"] {
            #expect(CallRecord.endReason(reason, in: .liveCommunicationKit) == reason)
        }
    }
}
