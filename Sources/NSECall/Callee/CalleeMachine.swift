public import NSEDevice
public import NSESIP

/// The app's side of a call after it reported it to CallKit, as a state machine: re-REGISTER, wait for the INVITE
/// whose Call-ID is the push's, ring, then do what the user does, until the call ends (PJSIP's and Linphone's iOS
/// guides; docs/voip.md). Pure: ``CalleeDriver`` feeds it events and carries out its actions.
public struct CalleeMachine: Sendable {
    /// Where the call is.
    public enum Phase: Sendable, Equatable {
        /// The app re-REGISTERs with its push parameters, so that the server sends the held INVITE.
        case registering
        /// Registered; the INVITE has not come yet.
        case waitingForInvite
        /// The INVITE came and 180 Ringing is sent; the user has not acted yet.
        case ringing
        /// 200 OK is sent; its ACK has not come.
        case answering
        /// The call is set up.
        case inCall
        /// Over, for this reason.
        case ended(CallEndReason)
    }

    /// The machine's timers.
    public enum Timer: Sendable, Hashable, CaseIterable {
        /// The INVITE's wait, from the report.
        case invite
        /// The user's answer (or decline) delay, from the first ring.
        case decide
        /// How long an ignored call rings.
        case ring
        /// The ACK's wait, from the 200.
        case ack
        /// The user's hang-up, from the ACK.
        case hangUp
    }

    /// What happens.
    public enum Event: Sendable, Equatable {
        /// The REGISTER got this final status.
        case registered(statusCode: Int)
        /// The REGISTER could not be sent or answered (connection, timeout, credentials).
        case registrationFailed
        /// The INVITE with the push's Call-ID came.
        case offered
        /// Something happened to that call.
        case call(SIPCallEvent)
        /// A timer fired.
        case timer(Timer)
        /// The app is being terminated (the phone shuts down, `nse serve` stops): it ends the call now.
        case terminated
    }

    /// Steps of the call's timeline, in the result.
    public enum Step: String, Sendable, Equatable {
        case answeredInCallKit = "answered_in_callkit"
        case registered
        case inviteReceived = "invite_received"
        case ringing
        case answered
        case confirmed
        case ended
    }

    /// What the driver does.
    public enum Action: Sendable, Equatable {
        /// Send the REGISTER.
        case register
        /// 180 Ringing.
        case ring
        /// 200 OK with the answer to the offer.
        case answer
        /// A final refusal.
        case reject(statusCode: Int)
        /// BYE.
        case hangUp
        /// Start (or restart) a timer.
        case start(Timer, seconds: Double)
        /// Stop a timer.
        case stop(Timer)
        /// Note a step of the timeline now.
        case record(Step)
        /// The call is over: the end reason and the SIP status that ended it on this end (nil when none did).
        case finish(CallEndReason, sipStatus: Int?)
    }

    public let plan: CallSettings
    public private(set) var phase: Phase = .registering

    public init(plan: CallSettings) {
        self.plan = plan
    }

    /// The first actions, right after the report.
    public mutating func start() -> [Action] {
        var actions: [Action] = [.register, .start(.invite, seconds: plan.inviteTimeout)]
        if plan.action == .answerBeforeInvite { actions.append(.record(.answeredInCallKit)) }
        return actions
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.ended, _):
            return []
        case (.registering, .registered(let status)) where (200..<300).contains(status):
            phase = .waitingForInvite
            return [.record(.registered)]
        case (.registering, .registered(let status)):
            return end(.failed, sipStatus: status)
        case (_, .registered(let status)) where (200..<300).contains(status):
            // The 200 read after the INVITE it released: the timeline still shows when it came.
            return [.record(.registered)]
        case (.registering, .registrationFailed):
            return end(.failed, sipStatus: nil)
        case (.registering, .offered), (.waitingForInvite, .offered):
            // The server sends the held INVITE once the REGISTER is in: it may arrive before the 200 is read.
            phase = .ringing
            var actions: [Action] = [.stop(.invite), .record(.inviteReceived), .ring, .record(.ringing)]
            switch plan.action {
            case .answerBeforeInvite:
                actions += answer()
            case .answer, .decline, .busy:
                actions.append(.start(.decide, seconds: plan.answerAfter))
            case .ignore:
                actions.append(.start(.ring, seconds: plan.ringTimeout))
            }
            return actions
        case (.registering, .timer(.invite)), (.waitingForInvite, .timer(.invite)):
            // The INVITE never came (cancelled before it was fetched, lost): the app ends the call it reported.
            return end(.failed, sipStatus: nil)
        case (.ringing, .timer(.decide)):
            switch plan.action {
            case .answer, .answerBeforeInvite: return answer()
            case .decline: return [.reject(statusCode: 603)] + end(.declined, sipStatus: 603)
            case .busy: return [.reject(statusCode: 486)] + end(.declined, sipStatus: 486)
            case .ignore: return []
            }
        case (.ringing, .timer(.ring)):
            return [.reject(statusCode: 480)] + end(.unanswered, sipStatus: 480)
        case (.ringing, .call(.cancelled(let reason))):
            return end(CallEndReason.ofCancel(reason: reason), sipStatus: 487)
        case (.answering, .call(.confirmed)):
            phase = .inCall
            return [.stop(.ack), .record(.confirmed), .start(.hangUp, seconds: plan.hangupAfter)]
        case (.answering, .timer(.ack)):
            // RFC 3261 §13.3.1.4: a 2xx never acknowledged ends the dialog with a BYE.
            return [.hangUp] + end(.failed, sipStatus: nil)
        case (.answering, .call(.remoteHangUp)), (.inCall, .call(.remoteHangUp)):
            return end(.remoteEnded, sipStatus: 200)
        case (.inCall, .timer(.hangUp)):
            return [.hangUp] + end(.hungUp, sipStatus: 200)
        case (_, .call(.failed)):
            return end(.failed, sipStatus: nil)
        case (.registering, .terminated), (.waitingForInvite, .terminated):
            return end(.failed, sipStatus: nil)
        case (.ringing, .terminated):
            return [.reject(statusCode: 480)] + end(.failed, sipStatus: 480)
        case (.answering, .terminated), (.inCall, .terminated):
            return [.hangUp] + end(.failed, sipStatus: 200)
        default:
            return []
        }
    }

    private mutating func answer() -> [Action] {
        phase = .answering
        return [.answer, .record(.answered), .start(.ack, seconds: plan.ackTimeout)]
    }

    private mutating func end(_ reason: CallEndReason, sipStatus: Int?) -> [Action] {
        phase = .ended(reason)
        return Timer.allCases.map { .stop($0) } + [.record(.ended), .finish(reason, sipStatus: sipStatus)]
    }
}
