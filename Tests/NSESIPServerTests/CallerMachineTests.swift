import NSECall
import NSESIP
import Testing

/// The caller's side of a call (`nse call`) as a pure state machine: every rule without a socket or a clock.
struct CallerMachineTests {
    typealias Machine = CallerMachine

    func response(_ status: Int) -> SIPCallEvent {
        let answer = SIPResponse(statusCode: status)
        switch status {
        case 100..<200: return .progress(answer)
        case 200..<300: return .answered(answer)
        default: return .refused(answer)
        }
    }

    /// Runs `events` after `start()`, returning every action.
    func run(_ machine: inout Machine, _ events: [Machine.Event]) -> [Machine.Action] {
        var actions = machine.start()
        for event in events { actions += machine.handle(event) }
        return actions
    }

    func end(_ actions: [Machine.Action]) -> Machine.End? {
        for case .finish(let end) in actions.reversed() { return end }
        return nil
    }

    func steps(_ actions: [Machine.Action]) -> [Machine.Step] {
        actions.compactMap { if case .record(let step) = $0 { step } else { nil } }
    }

    @Test func answeredThenTheCallerHangsUp() {
        var m = Machine(plan: .init(hangupAfter: 2, timeout: 30))
        let actions = run(&m, [.call(response(100)), .call(response(180)), .call(response(200))])
        #expect(steps(actions) == [.invited, .trying, .ringing, .answered])
        #expect(actions.contains(.start(.timeout, seconds: 30)))
        #expect(actions.contains(.stop(.timeout)) && actions.contains(.start(.hangUp, seconds: 2)))
        #expect(m.phase == .inCall)
        let hangUp = m.handle(.timer(.hangUp))
        #expect(hangUp.contains(.hangUp))
        #expect(end(hangUp) == Machine.End(endedBy: .caller, finalStatus: 200, answered: true))
        // Nothing happens after the end.
        #expect(m.handle(.call(.remoteHangUp)).isEmpty && m.handle(.timer(.timeout)).isEmpty)
    }

    @Test func theCalleeHangsUpFirst() {
        var m = Machine(plan: .init())
        let actions = run(&m, [.call(response(180)), .call(response(200)), .call(.remoteHangUp)])
        #expect(!actions.contains(.hangUp))
        #expect(end(actions) == Machine.End(endedBy: .callee, finalStatus: 200, answered: true))
    }

    @Test(arguments: [486, 603, 480, 404])
    func theCalleeRefuses(status: Int) {
        var m = Machine(plan: .init(cancelAfter: 5))
        let actions = run(&m, [.call(response(180)), .call(response(status))])
        #expect(steps(actions).suffix(2) == [.refused, .ended])
        #expect(!actions.contains(.cancel))
        #expect(actions.contains(.stop(.cancel)))
        #expect(end(actions) == Machine.End(endedBy: .callee, finalStatus: status, answered: false))
    }

    @Test func theCallerCancelsWhileItRings() {
        var m = Machine(plan: .init(cancelAfter: 1.5))
        var actions = run(&m, [.call(response(180))])
        #expect(actions.contains(.start(.cancel, seconds: 1.5)))
        actions = m.handle(.timer(.cancel))
        #expect(actions.contains(.cancel) && steps(actions) == [.cancelled])
        #expect(m.phase == .cancelling)
        // A late 180 changes nothing; the 487 ends it.
        #expect(m.handle(.call(response(180))).isEmpty)
        let refused = m.handle(.call(response(487)))
        #expect(end(refused) == Machine.End(endedBy: .caller, finalStatus: 487, answered: false))
    }

    /// RFC 3261 §9.1: the callee's 2xx may cross the caller's CANCEL; the call is then set up, and the caller,
    /// who no longer wants it, ends it with a BYE.
    @Test func anAnswerThatCrossesTheCancelIsHungUp() {
        var m = Machine(plan: .init(cancelAfter: 1))
        _ = run(&m, [.call(response(180)), .timer(.cancel)])
        let actions = m.handle(.call(response(200)))
        #expect(actions.contains(.hangUp))
        #expect(steps(actions) == [.answered, .ended])
        #expect(end(actions) == Machine.End(endedBy: .caller, finalStatus: 200, answered: true))
    }

    @Test func noAnswerWithinTheTimeoutCancels() {
        var m = Machine(plan: .init(timeout: 4))
        var actions = run(&m, [.call(response(100)), .timer(.timeout)])
        #expect(actions.contains(.cancel))
        #expect(actions.last == .start(.timeout, seconds: 4))
        actions = m.handle(.call(response(487)))
        #expect(end(actions) == Machine.End(endedBy: .timeout, finalStatus: 487, answered: false))
    }

    @Test func aCancelWhose487NeverComesFails() {
        var m = Machine(plan: .init(cancelAfter: 0, timeout: 2))
        let actions = run(&m, [.call(response(100)), .timer(.cancel), .timer(.timeout)])
        #expect(end(actions) == Machine.End(endedBy: .failure, finalStatus: nil, answered: false))
    }

    @Test func aFailedTransactionEndsTheCall() {
        var m = Machine(plan: .init())
        let failure = SIPError(.timeout, "no answer")
        let actions = run(&m, [.call(.failed(failure))])
        #expect(end(actions) == Machine.End(endedBy: .failure, finalStatus: nil, answered: false))
        // In a call, a failure keeps the answer it had.
        var inCall = Machine(plan: .init())
        let later = run(&inCall, [.call(response(200)), .call(.failed(failure))])
        #expect(end(later) == Machine.End(endedBy: .failure, finalStatus: 200, answered: true))
    }

    @Test func theUserCancelsBeforeAnyProvisional() {
        // The machine asks for the CANCEL at once; the user agent holds it until a provisional answer (§9.1).
        var m = Machine(plan: .init(cancelAfter: 0))
        let actions = run(&m, [.timer(.cancel), .call(response(100)), .call(response(487))])
        #expect(actions.contains(.cancel))
        #expect(end(actions) == Machine.End(endedBy: .caller, finalStatus: 487, answered: false))
    }
}
