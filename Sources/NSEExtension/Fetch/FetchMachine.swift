import NSEPayload

/// The SIP fetch's decisions, without I/O: one event at a time in, the actions to run out.
///
/// A push names a Call-ID; the extension registers, the registrar answers 200 and at once sends every MESSAGE it holds
/// for the account (`nse sip-server` writes the 200 and the whole flush in one go, on the same flow). The machine
/// answers each MESSAGE (the awaited one as the target, every other to be kept for a later push), re-registers while
/// it waits, sends the IMDN the sender asked for, and leaves once the flush is over:
///
/// **The flush is over** when the awaited message has been answered, the 200 to our REGISTER has arrived, the IMDN
/// (if any) is answered, and no MESSAGE has arrived for `quiet` after our last answer, where `quiet` is
/// `quietFactor` times the longest wait seen so far between the 200 or one of our answers and the arrival of the next
/// MESSAGE (when the user agent hands it over), bounded by `quietFloor` and `quietCeiling`. The registrar sends the
/// flush back to back, so each next MESSAGE is already in our socket buffer when we answer the previous one, and that
/// wait is only the user agent's hand-off latency; a MESSAGE that arrived before the 200 or our answer was handled
/// counts as no wait.
/// Leaving early never loses a message: one we have not answered 200 stays held by the server for the next REGISTER.
struct FetchMachine: Sendable {
    /// Where the fetch is.
    enum Phase: Sendable, Equatable {
        /// The first REGISTER is on its way.
        case registering
        /// Registered; the awaited message has not arrived. `reregistering` while a refresh is in flight.
        case waiting(reregistering: Bool)
        /// The awaited message is here; the rest of the flush (and the IMDN's answer) is being collected.
        case draining(Drain)
        /// The user agent is closing; MESSAGEs still arriving are kept for a later push.
        case closing(FetchOutcome)
        /// Finished.
        case done
    }

    /// The state of the drain after the awaited message.
    struct Drain: Sendable, Equatable {
        var notice: Notice
        /// Whether a REGISTER has been answered 2xx (the flush has started).
        var flushing: Bool
        /// When the quiet window starts: the last 2xx to a REGISTER or the last answer to a MESSAGE.
        var quietSince: UInt64
        /// The generation of the armed quiet timer (older ones are ignored).
        var quietGeneration: Int
    }

    /// The IMDN for the awaited message.
    enum Notice: Sendable, Equatable {
        case notRequested, pending, answered
    }

    /// How to answer an incoming MESSAGE.
    enum Disposition: Sendable, Equatable {
        /// The awaited one: this process shows it (kept as well until it is shown), answered 200.
        case target
        /// Any other, or the awaited one once the fetch has decided: 200 once kept in the store, else 500.
        case other
    }

    enum Timer: Sendable, Hashable {
        case deadline, reregister, notice
        case quiet(generation: Int)

        /// One armed timer per slot: arming a slot again replaces the one before.
        var slot: Int {
            switch self {
            case .deadline: 0
            case .reregister: 1
            case .notice: 2
            case .quiet: 3
            }
        }
    }

    enum Event: Sendable, Equatable {
        case registerAnswered(status: Int)
        case registerFailed(String)
        /// A new MESSAGE waits for its answer; `wantsNotice` when it is the awaited one and asks for an IMDN.
        case messageOffered(id: Int, callID: String, wantsNotice: Bool)
        /// The answer to `id` has been sent.
        case messageAnswered(id: Int)
        /// The result of `checkStore`: whether another process had kept the awaited message.
        case storeChecked(found: Bool, wantsNotice: Bool)
        /// The awaited message, answered, is another process's to show (the App Group store's claim decided).
        case targetShownElsewhere
        /// The host's `timeWillExpire`.
        case expiryNotice
        /// The main app came to the foreground and asks for the shared core.
        case coreStopRequested
        case timerFired(Timer)
        /// The IMDN's final status (nil when it failed).
        case noticeAnswered(status: Int?)
        case agentClosed
    }

    enum Action: Sendable, Equatable {
        case register
        /// Take the awaited message from the App Group store if another process kept it; answer `storeChecked`.
        case checkStore
        case answer(id: Int, Disposition)
        case arm(Timer, at: UInt64)
        case sendNotice
        /// Close the user agent; answer `agentClosed` when it is closed.
        case close
        /// The fetch is over: how it ended (`shownElsewhere` when another process shows the awaited message; this
        /// one leaves at once and shows nothing of it).
        case finish(FetchOutcome)
    }

    /// The timing rules.
    struct Rules: Sendable, Equatable {
        /// Re-REGISTER this long after the last answer while waiting, so messages held since are flushed to us too.
        var reregisterNanoseconds: UInt64 = 2_000_000_000
        var quietFactor: UInt64 = 4
        var quietFloor: UInt64 = 500_000
        var quietCeiling: UInt64 = 5_000_000
        /// Give up on the IMDN's answer after this long.
        var noticeNanoseconds: UInt64 = 2_000_000_000
    }

    let target: String
    let deadline: UInt64
    let rules: Rules
    private(set) var phase: Phase = .registering
    /// REGISTERs sent.
    private(set) var registrations = 0
    /// When the last REGISTER was answered 2xx.
    private var registeredAt: UInt64?
    /// The longest wait seen between a 2xx or an answer and the next MESSAGE (nil before the first).
    private(set) var longestWait: UInt64?
    /// When the last REGISTER was answered 2xx or the last MESSAGE answered: the next arrival's wait counts from here.
    private var lastQuietMark: UInt64?
    private var nextGeneration = 0
    private var foundSource: FetchOutcome.Source = .network

    init(target: String, deadline: UInt64, rules: Rules = Rules()) {
        self.target = target
        self.deadline = deadline
        self.rules = rules
    }

    /// The window after the last answer in which no MESSAGE must arrive for the flush to be over.
    var quiet: UInt64 {
        min(max((longestWait ?? 0) * rules.quietFactor, rules.quietFloor), rules.quietCeiling)
    }

    /// The first actions: register, and arm the fetch deadline.
    mutating func start() -> [Action] {
        registrations = 1
        return [.register, .arm(.deadline, at: deadline)]
    }

    mutating func handle(_ event: Event, at now: UInt64) -> [Action] {
        switch event {
        case .registerAnswered(let status):
            return registerAnswered(status, at: now)
        case .registerFailed(let reason):
            return registerFailed(reason)
        case .messageOffered(let id, let callID, let wantsNotice):
            return messageOffered(id: id, callID: callID, wantsNotice: wantsNotice, at: now)
        case .messageAnswered:
            lastQuietMark = now
            guard case .draining(var drain) = phase else { return [] }
            drain.quietSince = now
            return armQuiet(&drain)
        case .storeChecked(let found, let wantsNotice):
            guard found, isAwaiting else { return [] }
            return enterDrain(.store, wantsNotice: wantsNotice, at: now)
        case .targetShownElsewhere:
            switch phase {
            case .registering, .waiting, .draining: return close(.shownElsewhere)
            case .closing, .done: return []
            }
        case .expiryNotice:
            return leave(awaiting: .expired)
        case .coreStopRequested:
            return leave(awaiting: .coreStopped)
        case .timerFired(let timer):
            return timerFired(timer, at: now)
        case .noticeAnswered:
            guard case .draining(var drain) = phase, drain.notice == .pending else { return [] }
            drain.notice = .answered
            return leaveIfFlushed(drain, at: now)
        case .agentClosed:
            guard case .closing(let outcome) = phase else { return [] }
            phase = .done
            return [.finish(outcome)]
        }
    }

    // MARK: - Events

    private var isAwaiting: Bool {
        switch phase {
        case .registering, .waiting: true
        default: false
        }
    }

    private mutating func registerAnswered(_ status: Int, at now: UInt64) -> [Action] {
        let success = (200..<300).contains(status)
        switch phase {
        case .registering, .waiting:
            guard success else {
                return close(.registerFailed(ReasonCode.sipRegisterFailed.reason("the registrar answered \(status)")))
            }
            registeredAt = now
            lastQuietMark = now
            phase = .waiting(reregistering: false)
            return [.checkStore, .arm(.reregister, at: now + rules.reregisterNanoseconds)]
        case .draining(var drain):
            // The awaited message came before the answer to our REGISTER: the flush starts now. Without a flush
            // (the REGISTER refused) there is nothing more to wait for; a refused refresh changes nothing.
            guard success else { return drain.flushing ? [] : close(.found(foundSource)) }
            registeredAt = now
            lastQuietMark = now
            drain.flushing = true
            drain.quietSince = now
            return armQuiet(&drain)
        case .closing, .done:
            return []
        }
    }

    private mutating func registerFailed(_ reason: String) -> [Action] {
        switch phase {
        case .registering, .waiting: close(.registerFailed(ReasonCode.sipRegisterFailed.reason("\(reason)")))
        case .draining(let drain) where !drain.flushing: close(.found(foundSource))
        default: []
        }
    }

    private mutating func messageOffered(id: Int, callID: String, wantsNotice: Bool, at now: UInt64) -> [Action] {
        if let mark = lastQuietMark, now >= mark { longestWait = max(longestWait ?? 0, now - mark) }
        if callID == target, isAwaiting {
            // The IMDN goes out first, so its round trip overlaps the store write behind our answer.
            let drain = enterDrain(.network, wantsNotice: wantsNotice, at: now)
            return drain + [.answer(id: id, .target)]
        }
        if case .draining(var drain) = phase {
            // Not quiet: the window restarts once this one is answered.
            nextGeneration += 1
            drain.quietGeneration = nextGeneration
            phase = .draining(drain)
        }
        return [.answer(id: id, .other)]
    }

    private mutating func timerFired(_ timer: Timer, at now: UInt64) -> [Action] {
        switch (timer, phase) {
        case (.deadline, .registering), (.deadline, .waiting):
            return close(.notFound)
        case (.deadline, .draining):
            return close(.found(foundSource))
        case (.reregister, .waiting(reregistering: false)):
            registrations += 1
            phase = .waiting(reregistering: true)
            return [.register]
        case (.notice, .draining(var drain)) where drain.notice == .pending:
            drain.notice = .answered
            return leaveIfFlushed(drain, at: now)
        case (.quiet(let generation), .draining(let drain)) where generation == drain.quietGeneration:
            return leaveIfFlushed(drain, at: now)
        default:
            return []
        }
    }

    // MARK: - Transitions

    private mutating func enterDrain(_ source: FetchOutcome.Source, wantsNotice: Bool, at now: UInt64) -> [Action] {
        foundSource = source
        var drain = Drain(
            notice: wantsNotice ? .pending : .notRequested, flushing: registeredAt != nil,
            quietSince: max(registeredAt ?? now, lastQuietMark ?? now), quietGeneration: 0)
        var actions: [Action] = []
        if wantsNotice { actions += [.sendNotice, .arm(.notice, at: now + rules.noticeNanoseconds)] }
        if source == .store {
            // Nothing to answer: the quiet window runs from now.
            drain.quietSince = now
            actions += armQuiet(&drain)
        } else {
            // The window starts when our answer to it has been sent (`messageAnswered`).
            nextGeneration += 1
            drain.quietGeneration = nextGeneration
            phase = .draining(drain)
        }
        return actions
    }

    private mutating func armQuiet(_ drain: inout Drain) -> [Action] {
        nextGeneration += 1
        drain.quietGeneration = nextGeneration
        phase = .draining(drain)
        guard drain.flushing else { return [] }
        return [.arm(.quiet(generation: drain.quietGeneration), at: drain.quietSince + quiet)]
    }

    private mutating func leaveIfFlushed(_ drain: Drain, at now: UInt64) -> [Action] {
        phase = .draining(drain)
        guard drain.flushing, drain.notice != .pending, now >= drain.quietSince + quiet else { return [] }
        return close(.found(foundSource))
    }

    /// The expiry notice, or the main app taking the core: leave at once, with the awaited message when it is here.
    private mutating func leave(awaiting outcome: FetchOutcome) -> [Action] {
        switch phase {
        case .registering, .waiting: close(outcome)
        case .draining: close(.found(foundSource))
        case .closing, .done: []
        }
    }

    private mutating func close(_ outcome: FetchOutcome) -> [Action] {
        phase = .closing(outcome)
        return [.close]
    }
}
