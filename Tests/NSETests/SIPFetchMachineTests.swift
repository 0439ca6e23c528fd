import Testing

@testable import NSEExtension

/// The SIP fetch's state machine, fed event sequences without sockets, processes or clocks.
@Suite struct SIPFetchMachineTests {
    typealias Machine = FetchMachine
    static let ms: UInt64 = 1_000_000
    static let deadline: UInt64 = 25_000 * ms

    func started(_ rules: Machine.Rules = Machine.Rules()) -> Machine {
        var machine = Machine(target: "ours", deadline: Self.deadline, rules: rules)
        #expect(machine.start() == [.register, .arm(.deadline, at: Self.deadline)])
        return machine
    }

    /// Registered at 5 ms; the store did not have ours.
    func registered(_ rules: Machine.Rules = Machine.Rules()) -> Machine {
        var machine = started(rules)
        #expect(
            machine.handle(.registerAnswered(status: 200), at: 5 * Self.ms)
                == [.checkStore, .arm(.reregister, at: 5 * Self.ms + rules.reregisterNanoseconds)])
        #expect(machine.handle(.storeChecked(found: false, wantsNotice: false), at: 5 * Self.ms) == [])
        #expect(machine.phase == .waiting(reregistering: false))
        return machine
    }

    /// The armed quiet timer among `actions`.
    func quietTimer(_ actions: [Machine.Action]) -> (Machine.Timer, UInt64)? {
        for case .arm(let timer, let at) in actions { if case .quiet = timer { return (timer, at) } }
        return nil
    }

    @Test func foundThenDrainThenLeave() throws {
        var machine = registered()
        // Ours arrives 200 µs after the 200; answered 100 µs later.
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 5_200_000) == [
                .answer(id: 0, .target)
            ])
        let armed = try #require(quietTimer(machine.handle(.messageAnswered(id: 0), at: 5_300_000)))
        // The window is 4 x the 200 µs wait, above the 500 µs floor: 800 µs after the answer.
        #expect(machine.quiet == 800_000)
        #expect(armed.1 == 6_100_000)
        // Another message of the flush: answered as "other", and the window restarts from its answer.
        #expect(
            machine.handle(.messageOffered(id: 1, callID: "theirs", wantsNotice: false), at: 5_350_000) == [
                .answer(id: 1, .other)
            ])
        #expect(
            machine.handle(.timerFired(armed.0), at: 6_100_000) == [], "a window restarted by a MESSAGE does not end")
        let second = try #require(quietTimer(machine.handle(.messageAnswered(id: 1), at: 6_200_000)))
        #expect(second.1 == 6_200_000 + machine.quiet)
        #expect(machine.handle(.timerFired(second.0), at: second.1) == [.close])
        #expect(machine.phase == .closing(.found(.network)))
        // Late messages while the user agent closes are kept for a later push, ours too.
        #expect(
            machine.handle(.messageOffered(id: 2, callID: "ours", wantsNotice: false), at: 7 * Self.ms) == [
                .answer(id: 2, .other)
            ])
        #expect(machine.handle(.agentClosed, at: 8 * Self.ms) == [.finish(.found(.network))])
        #expect(machine.phase == .done)
    }

    /// The awaited message came, but the App Group store says another process shows it (a server that pushed
    /// twice): leave at once, whether it came from the network or was seen claimed in the store.
    @Test func theTargetShownElsewhereEndsTheFetchAtOnce() {
        var machine = registered()
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 6 * Self.ms) == [
                .answer(id: 0, .target)
            ])
        _ = machine.handle(.messageAnswered(id: 0), at: 6 * Self.ms)
        #expect(machine.handle(.targetShownElsewhere, at: 6 * Self.ms) == [.close])
        #expect(machine.phase == .closing(.shownElsewhere))
        #expect(machine.handle(.agentClosed, at: 7 * Self.ms) == [.finish(.shownElsewhere)])

        var waiting = started()
        _ = waiting.handle(.registerAnswered(status: 200), at: 5 * Self.ms)
        #expect(waiting.handle(.targetShownElsewhere, at: 5 * Self.ms) == [.close])
        #expect(waiting.handle(.targetShownElsewhere, at: 5 * Self.ms) == [], "once")
    }

    @Test func quietWindowIsBounded() throws {
        var machine = registered()
        // A slow store makes a long wait before the next message: the window is capped.
        _ = machine.handle(.messageOffered(id: 0, callID: "theirs", wantsNotice: false), at: 5_000_010)
        _ = machine.handle(.messageAnswered(id: 0), at: 6 * Self.ms)
        _ = machine.handle(.messageOffered(id: 1, callID: "ours", wantsNotice: false), at: 9 * Self.ms)
        #expect(machine.quiet == Machine.Rules().quietCeiling)
        var fast = registered()
        _ = fast.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 5_000_010)
        #expect(fast.quiet == Machine.Rules().quietFloor)
        // A MESSAGE that arrived before the 200 was handled (the same read) is no wait at all: the floor.
        var sameRead = registered()
        _ = sameRead.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 4_900_000)
        #expect(sameRead.longestWait == nil)
        #expect(sameRead.quiet == Machine.Rules().quietFloor)
    }

    @Test func targetBeforeTheRegisterAnswerWaitsForTheFlush() throws {
        var machine = started()
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 2 * Self.ms) == [
                .answer(id: 0, .target)
            ])
        #expect(machine.handle(.messageAnswered(id: 0), at: 3 * Self.ms) == [], "no flush yet: no window")
        let armed = try #require(quietTimer(machine.handle(.registerAnswered(status: 200), at: 4 * Self.ms)))
        #expect(machine.handle(.timerFired(armed.0), at: armed.1) == [.close])
        // A REGISTER refused after ours came: no flush to wait for.
        var refused = started()
        _ = refused.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 2 * Self.ms)
        #expect(refused.handle(.registerAnswered(status: 403), at: 4 * Self.ms) == [.close])
        #expect(refused.phase == .closing(.found(.network)))
    }

    @Test func registerFailure() {
        var refused = started()
        #expect(refused.handle(.registerAnswered(status: 403), at: 4 * Self.ms) == [.close])
        #expect(refused.phase == .closing(.registerFailed("sip-register-failed: the registrar answered 403")))
        #expect(
            refused.handle(.agentClosed, at: 5 * Self.ms) == [
                .finish(.registerFailed("sip-register-failed: the registrar answered 403"))
            ])
        var unreachable = started()
        #expect(unreachable.handle(.registerFailed("connection refused"), at: 4 * Self.ms) == [.close])
        #expect(unreachable.phase == .closing(.registerFailed("sip-register-failed: connection refused")))
        // Events after the decision change nothing.
        #expect(unreachable.handle(.registerAnswered(status: 200), at: 5 * Self.ms) == [])
        #expect(unreachable.handle(.timerFired(.deadline), at: Self.deadline) == [])
    }

    @Test func deadlineWithoutTheMessage() {
        var machine = registered()
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "theirs", wantsNotice: false), at: 6 * Self.ms) == [
                .answer(id: 0, .other)
            ])
        #expect(machine.handle(.timerFired(.deadline), at: Self.deadline) == [.close])
        #expect(machine.phase == .closing(.notFound))
        #expect(machine.handle(.agentClosed, at: Self.deadline + Self.ms) == [.finish(.notFound)])
    }

    @Test func deadlineWhileDrainingLeavesWithTheMessage() {
        var machine = registered()
        _ = machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: true), at: 6 * Self.ms)
        #expect(machine.handle(.timerFired(.deadline), at: Self.deadline) == [.close])
        #expect(machine.phase == .closing(.found(.network)))
    }

    @Test func expiryBeforeFound() {
        var machine = registered()
        #expect(machine.handle(.expiryNotice, at: 7 * Self.ms) == [.close])
        #expect(machine.phase == .closing(.expired))
        // Ours arriving now is kept for the next push, not shown.
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: true), at: 8 * Self.ms) == [
                .answer(id: 0, .other)
            ])
        #expect(machine.handle(.agentClosed, at: 9 * Self.ms) == [.finish(.expired)])
        // Before even the REGISTER's answer.
        var early = started()
        #expect(early.handle(.expiryNotice, at: Self.ms) == [.close])
        #expect(early.phase == .closing(.expired))
    }

    @Test func expiryWhileDrainingLeavesAtOnce() {
        var machine = registered()
        _ = machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 6 * Self.ms)
        #expect(machine.handle(.expiryNotice, at: 6_100_000) == [.close])
        #expect(machine.phase == .closing(.found(.network)))
    }

    @Test func foundInTheStoreOnARegisterAnswer() throws {
        var machine = started()
        #expect(machine.handle(.registerAnswered(status: 200), at: 5 * Self.ms).first == .checkStore)
        let actions = machine.handle(.storeChecked(found: true, wantsNotice: false), at: 5 * Self.ms)
        let armed = try #require(quietTimer(actions))
        #expect(machine.handle(.timerFired(armed.0), at: armed.1) == [.close])
        #expect(machine.phase == .closing(.found(.store)))
    }

    @Test func reregisterCadence() {
        let rules = Machine.Rules()
        var machine = registered(rules)
        let first = 5 * Self.ms + rules.reregisterNanoseconds
        #expect(machine.handle(.timerFired(.reregister), at: first) == [.register])
        #expect(machine.registrations == 2)
        #expect(machine.phase == .waiting(reregistering: true))
        // A second firing while the refresh is in flight sends nothing.
        #expect(machine.handle(.timerFired(.reregister), at: first + Self.ms) == [])
        // Its answer checks the store again and arms the next refresh from the answer.
        #expect(
            machine.handle(.registerAnswered(status: 200), at: first + 3 * Self.ms)
                == [.checkStore, .arm(.reregister, at: first + 3 * Self.ms + rules.reregisterNanoseconds)])
        // Once ours is here, no more refreshes.
        _ = machine.handle(.storeChecked(found: false, wantsNotice: false), at: first + 3 * Self.ms)
        _ = machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: first + 4 * Self.ms)
        #expect(machine.handle(.timerFired(.reregister), at: first + 3 * Self.ms + rules.reregisterNanoseconds) == [])
        #expect(machine.registrations == 2)
    }

    @Test func imdnIsAwaitedBeforeLeaving() throws {
        let rules = Machine.Rules()
        var machine = registered(rules)
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: true), at: 5_100_000)
                == [.sendNotice, .arm(.notice, at: 5_100_000 + rules.noticeNanoseconds), .answer(id: 0, .target)])
        let armed = try #require(quietTimer(machine.handle(.messageAnswered(id: 0), at: 5_200_000)))
        #expect(machine.handle(.timerFired(armed.0), at: armed.1) == [], "the IMDN is still unanswered")
        #expect(machine.handle(.noticeAnswered(status: 404), at: armed.1 + Self.ms) == [.close])
        // An IMDN that is never answered is given up after its own timer.
        var silent = registered(rules)
        _ = silent.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: true), at: 5_100_000)
        let quiet = try #require(quietTimer(silent.handle(.messageAnswered(id: 0), at: 5_200_000)))
        #expect(silent.handle(.timerFired(quiet.0), at: quiet.1) == [])
        #expect(silent.handle(.timerFired(.notice), at: 5_100_000 + rules.noticeNanoseconds) == [.close])
        #expect(silent.phase == .closing(.found(.network)))
    }

    @Test func aDuplicateOfOursIsKeptNotShownTwice() {
        var machine = registered()
        #expect(
            machine.handle(.messageOffered(id: 0, callID: "ours", wantsNotice: false), at: 6 * Self.ms) == [
                .answer(id: 0, .target)
            ])
        #expect(
            machine.handle(.messageOffered(id: 1, callID: "ours", wantsNotice: false), at: 6_100_000) == [
                .answer(id: 1, .other)
            ])
    }
}
