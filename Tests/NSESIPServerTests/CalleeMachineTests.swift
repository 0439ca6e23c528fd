import NSECall
import NSEDevice
import NSESIP
import Testing

/// The app's side of a call as a pure state machine: every rule without a socket or a clock.
struct CalleeMachineTests {
    typealias Machine = CalleeMachine

    func machine(_ action: CallSettings.Action, configure: (inout CallSettings) -> Void = { _ in }) -> Machine {
        var plan = CallSettings()
        plan.action = action
        configure(&plan)
        return Machine(plan: plan)
    }

    /// Runs `events` after `start()`, returning every action.
    func run(_ machine: inout Machine, _ events: [Machine.Event]) -> [Machine.Action] {
        var actions = machine.start()
        for event in events { actions += machine.handle(event) }
        return actions
    }

    func finish(_ actions: [Machine.Action]) -> Machine.Action? {
        actions.last { if case .finish = $0 { true } else { false } }
    }

    func steps(_ actions: [Machine.Action]) -> [Machine.Step] {
        actions.compactMap { if case .record(let step) = $0 { step } else { nil } }
    }

    @Test func answeredThenTheCallerHangsUp() {
        var m = machine(.answer)
        let actions = run(
            &m,
            [.registered(statusCode: 200), .offered, .timer(.decide), .call(.confirmed), .call(.remoteHangUp)])
        #expect(steps(actions) == [.registered, .inviteReceived, .ringing, .answered, .confirmed, .ended])
        #expect(actions.contains(.ring) && actions.contains(.answer))
        #expect(actions.contains(.start(.decide, seconds: 1)))
        #expect(finish(actions) == .finish(.remoteEnded, sipStatus: 200))
        #expect(m.phase == .ended(.remoteEnded))
        // Nothing happens after the end.
        #expect(m.handle(.timer(.hangUp)).isEmpty)
    }

    @Test func theUserHangsUpAfterTheCallDuration() {
        var m = machine(.answer) { $0.hangupAfter = 7 }
        let actions = run(&m, [.registered(statusCode: 200), .offered, .timer(.decide), .call(.confirmed)])
        #expect(actions.contains(.start(.hangUp, seconds: 7)))
        let end = m.handle(.timer(.hangUp))
        #expect(end.first == .hangUp)
        #expect(finish(end) == .finish(.hungUp, sipStatus: 200))
    }

    @Test(arguments: [(CallSettings.Action.decline, 603), (.busy, 486)])
    func theUserDeclines(action: CallSettings.Action, status: Int) {
        var m = machine(action)
        let actions = run(&m, [.registered(statusCode: 200), .offered, .timer(.decide)])
        #expect(actions.contains(.reject(statusCode: status)))
        #expect(finish(actions) == .finish(.declined, sipStatus: status))
        #expect(!actions.contains(.answer))
    }

    @Test(arguments: [
        (nil as String?, CallEndReason.unanswered),
        ("SIP;cause=200;text=\"Call completed elsewhere\"", .answeredElsewhere),
        ("SIP ;cause=603 ;text=\"Declined\"", .declinedElsewhere),
        ("SIP;cause=600", .declinedElsewhere),
        ("Q.850;cause=16", .unanswered),
    ])
    func aCancelWhileRingingEndsTheCallForItsReason(reason: String?, expected: CallEndReason) {
        var m = machine(.ignore)
        let actions = run(&m, [.registered(statusCode: 200), .offered, .call(.cancelled(reason: reason))])
        #expect(actions.contains(.start(.ring, seconds: 120)))
        #expect(finish(actions) == .finish(expected, sipStatus: 487))
    }

    @Test func anIgnoredCallRingsOut() {
        var m = machine(.ignore) { $0.ringTimeout = 3 }
        let actions = run(&m, [.registered(statusCode: 200), .offered, .timer(.decide), .timer(.ring)])
        #expect(actions.contains(.reject(statusCode: 480)))
        #expect(finish(actions) == .finish(.unanswered, sipStatus: 480))
    }

    @Test func theInviteNeverComes() {
        var m = machine(.answer) { $0.inviteTimeout = 4 }
        let actions = run(&m, [.registered(statusCode: 200), .timer(.invite)])
        #expect(actions.prefix(2) == [.register, .start(.invite, seconds: 4)])
        #expect(finish(actions) == .finish(.failed, sipStatus: nil))
        #expect(!actions.contains(.ring))
    }

    @Test func aFailedRegistrationEndsTheCall() {
        var refused = machine(.answer)
        #expect(finish(run(&refused, [.registered(statusCode: 403)])) == .finish(.failed, sipStatus: 403))
        var unreachable = machine(.answer)
        #expect(finish(run(&unreachable, [.registrationFailed])) == .finish(.failed, sipStatus: nil))
    }

    @Test func answerBeforeTheInviteIsSentTheMomentItComes() {
        var m = machine(.answerBeforeInvite)
        let actions = run(&m, [.registered(statusCode: 200), .offered])
        #expect(steps(actions) == [.answeredInCallKit, .registered, .inviteReceived, .ringing, .answered])
        #expect(actions.contains(.answer))
        #expect(!actions.contains { if case .start(.decide, _) = $0 { true } else { false } })
        #expect(m.phase == .answering)
    }

    @Test func theInviteMayComeBeforeTheRegistersAnswer() {
        var m = machine(.answer)
        let actions = run(&m, [.offered, .registered(statusCode: 200)])
        #expect(m.phase == .ringing)
        // The 200 read late still takes its place in the timeline.
        #expect(steps(actions) == [.inviteReceived, .ringing, .registered])
    }

    @Test func anAnswerNeverAcknowledgedIsHungUp() {
        var m = machine(.answer)
        let actions = run(&m, [.registered(statusCode: 200), .offered, .timer(.decide), .timer(.ack)])
        #expect(actions.suffix(8).contains(.hangUp))
        #expect(finish(actions) == .finish(.failed, sipStatus: nil))
    }

    @Test func aByeBeforeTheAckStillEndsTheCallRemotely() {
        var m = machine(.answer)
        let actions = run(&m, [.registered(statusCode: 200), .offered, .timer(.decide), .call(.remoteHangUp)])
        #expect(finish(actions) == .finish(.remoteEnded, sipStatus: 200))
    }

    /// The app terminated (its host stopping) ends the call the way its phase allows: nothing to send before the
    /// INVITE, 480 while ringing, a BYE once answered.
    @Test func aTerminatedAppEndsTheCallNow() {
        var waiting = machine(.answer)
        let before = run(&waiting, [.registered(statusCode: 200), .terminated])
        #expect(finish(before) == .finish(.failed, sipStatus: nil))
        var ringing = machine(.ignore)
        let rang = run(&ringing, [.registered(statusCode: 200), .offered, .terminated])
        #expect(rang.contains(.reject(statusCode: 480)))
        #expect(finish(rang) == .finish(.failed, sipStatus: 480))
        var talking = machine(.answer)
        let talked = run(
            &talking, [.registered(statusCode: 200), .offered, .timer(.decide), .call(.confirmed), .terminated])
        #expect(talked.contains(.hangUp))
        #expect(finish(talked) == .finish(.failed, sipStatus: 200))
    }

    @Test func aFailedConnectionEndsTheCallAtAnyPoint() {
        var m = machine(.answer)
        let failure = SIPCallEvent.failed(SIPError(.closed, "connection closed"))
        let actions = run(&m, [.registered(statusCode: 200), .offered, .call(failure)])
        #expect(finish(actions) == .finish(.failed, sipStatus: nil))
        // Every timer is stopped at the end.
        #expect(CalleeMachine.Timer.allCases.allSatisfy { actions.contains(.stop($0)) })
    }
}
