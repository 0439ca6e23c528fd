public import NSESIP

/// The caller's side of a call (`nse call`), as a state machine: send the INVITE, hear it ring, and either be
/// answered and hang up, or be refused, or give up and CANCEL (RFC 3261 §§13.2, 9.1, 15). Pure: ``CallerDriver``
/// feeds it events and carries out its actions.
public struct CallerMachine: Sendable {
    /// What the caller's user does, and how long each wait lasts.
    public struct Plan: Sendable, Equatable {
        /// Seconds after the INVITE is sent at which the caller hangs up before an answer (CANCEL); nil: never.
        public var cancelAfter: Double?
        /// Seconds the caller stays in an answered call before hanging up, unless the callee hangs up first.
        public var hangupAfter: Double
        /// Seconds the caller waits for a final answer before it gives up (CANCEL), and for the 487 after its
        /// CANCEL before it calls the call failed.
        public var timeout: Double

        public init(cancelAfter: Double? = nil, hangupAfter: Double = 1, timeout: Double = 30) {
            self.cancelAfter = cancelAfter
            self.hangupAfter = hangupAfter
            self.timeout = timeout
        }
    }

    /// Where the call is.
    public enum Phase: Sendable, Equatable {
        /// The INVITE is sent; nothing has come back yet.
        case calling
        /// A provisional answer came (100 Trying, 180 Ringing, 183).
        case proceeding
        /// The CANCEL is asked for; the INVITE's final answer has not come.
        case cancelling
        /// Answered 2xx and acknowledged: the call is set up.
        case inCall
        /// Over.
        case ended(End)
    }

    /// Who ended the call, or what did.
    public enum EndedBy: String, Sendable, Equatable {
        /// The caller: its CANCEL before an answer, or its BYE after one.
        case caller
        /// The callee: a final refusal (486, 603, 480…), or its BYE after answering.
        case callee
        /// The caller's own patience: no final answer within the timeout, so it cancelled.
        case timeout
        /// The network: the transaction or the connection failed, or the CANCEL's 487 never came.
        case failure
    }

    /// How the call ended.
    public struct End: Sendable, Equatable {
        public var endedBy: EndedBy
        /// The INVITE's final status (200 when answered, 487 when cancelled, 603…); nil when none came.
        public var finalStatus: Int?
        /// Whether the callee answered (also when its 2xx crossed the caller's CANCEL, RFC 3261 §9.1).
        public var answered: Bool

        public init(endedBy: EndedBy, finalStatus: Int?, answered: Bool) {
            self.endedBy = endedBy
            self.finalStatus = finalStatus
            self.answered = answered
        }
    }

    /// The machine's timers.
    public enum Timer: Sendable, Hashable, CaseIterable {
        /// The user's cancel, from the INVITE.
        case cancel
        /// The wait for a final answer, from the INVITE; then the wait for the 487, from the CANCEL.
        case timeout
        /// The user's hang-up, from the answer.
        case hangUp
    }

    /// What happens.
    public enum Event: Sendable, Equatable {
        /// Something happened to the call (``SIPCall/events``).
        case call(SIPCallEvent)
        /// A timer fired.
        case timer(Timer)
    }

    /// Steps of the call's timeline, in the result.
    public enum Step: String, Sendable, Equatable {
        case invited
        case trying
        case ringing
        case answered
        case cancelled
        case refused
        case ended
    }

    /// What the driver does.
    public enum Action: Sendable, Equatable {
        /// CANCEL the INVITE (sent once a provisional answer has come, §9.1).
        case cancel
        /// BYE.
        case hangUp
        /// Start (or restart) a timer.
        case start(Timer, seconds: Double)
        /// Stop a timer.
        case stop(Timer)
        /// Note a step of the timeline now (the first time it happens).
        case record(Step)
        /// The call is over.
        case finish(End)
    }

    public let plan: Plan
    public private(set) var phase: Phase = .calling
    /// Set once the caller gave up for lack of an answer: the end is then the timeout's, not the user's.
    private var timedOut = false

    public init(plan: Plan) {
        self.plan = plan
    }

    /// The first actions, right after the INVITE is sent.
    public mutating func start() -> [Action] {
        var actions: [Action] = [.record(.invited), .start(.timeout, seconds: plan.timeout)]
        if let cancelAfter = plan.cancelAfter { actions.append(.start(.cancel, seconds: cancelAfter)) }
        return actions
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.ended, _):
            return []
        case (.calling, .call(.progress(let response))), (.proceeding, .call(.progress(let response))):
            phase = .proceeding
            return [.record(response.statusCode == 100 ? .trying : .ringing)]
        case (.cancelling, .call(.progress)):
            return []
        case (.calling, .call(.answered)), (.proceeding, .call(.answered)):
            phase = .inCall
            return [.stop(.cancel), .stop(.timeout), .record(.answered), .start(.hangUp, seconds: plan.hangupAfter)]
        case (.cancelling, .call(.answered)):
            // The 2xx crossed the CANCEL: the call is set up (and acknowledged), so the caller ends it with a BYE.
            return [.record(.answered), .hangUp] + end(timedOut ? .timeout : .caller, status: 200, answered: true)
        case (.calling, .call(.refused(let response))), (.proceeding, .call(.refused(let response))):
            return [.record(.refused)] + end(.callee, status: response.statusCode, answered: false)
        case (.cancelling, .call(.refused(let response))):
            return [.record(.refused)]
                + end(timedOut ? .timeout : .caller, status: response.statusCode, answered: false)
        case (.calling, .timer(.cancel)), (.proceeding, .timer(.cancel)):
            return cancel()
        case (.calling, .timer(.timeout)), (.proceeding, .timer(.timeout)):
            timedOut = true
            return cancel()
        case (.cancelling, .timer(.timeout)):
            // No final answer to the INVITE after the CANCEL (§9.1 gives the caller 64·T1; this is the user's bound).
            return end(.failure, status: nil, answered: false)
        case (.inCall, .timer(.hangUp)):
            return [.hangUp] + end(.caller, status: 200, answered: true)
        case (.inCall, .call(.remoteHangUp)):
            return end(.callee, status: 200, answered: true)
        case (.inCall, .call(.failed)):
            return end(.failure, status: 200, answered: true)
        case (_, .call(.failed)):
            return end(.failure, status: nil, answered: false)
        default:
            return []
        }
    }

    private mutating func cancel() -> [Action] {
        phase = .cancelling
        return [.stop(.cancel), .cancel, .record(.cancelled), .start(.timeout, seconds: plan.timeout)]
    }

    private mutating func end(_ endedBy: EndedBy, status: Int?, answered: Bool) -> [Action] {
        let end = End(endedBy: endedBy, finalStatus: status, answered: answered)
        phase = .ended(end)
        return Timer.allCases.map { .stop($0) } + [.record(.ended), .finish(end)]
    }
}
