import NSESIP

/// One incoming call through the server (Flexisip's call fork): the caller's INVITE, held until a device can take
/// it, then sent to every device that registers while the call waits (a leg each), whose answers go back to the
/// caller; the first 2xx wins and the other legs are cancelled; once answered, the dialog's requests (ACK, BYE,
/// re-INVITE) pass through the server both ways (it record-routes).
///
/// The server holds a call when its AOR's bindings have push parameters (the device is asleep and gets a push)
/// and forwards it at once to the live bindings without them. The caller hears 100 Trying at once, then what the
/// devices answer; the server itself answers 487 when the caller cancels, and 408 at the call fork timeout.
struct HeldCall {
    /// The INVITE the server sent to one device, how to reach that device, and how far it got.
    struct DeviceLeg {
        /// The Via branch of the server's INVITE (and of its CANCEL).
        var branch: String
        var flow: ServerFlow
        /// The INVITE as sent, for the ACK of a non-2xx answer and the CANCEL.
        var invite: SIPRequest
        /// Calls off the INVITE's retransmissions (an answer came).
        var retransmission: StopSignal
        /// The device answered provisionally: a CANCEL may be sent now (RFC 3261 §9.1).
        var proceeding = false
        /// The leg is to be cancelled as soon as the device answers provisionally.
        var cancelOwed = false
        /// The `Reason` header of the leg's CANCEL (RFC 3326), if it has one.
        var cancelReason: String? = nil
        /// The device's final status, once it gave one.
        var final: Int? = nil

        /// True while the device has not answered finally.
        var isOpen: Bool { final == nil }
    }

    /// Where the call is.
    enum Phase {
        /// Waiting for a device to register (the push is out); no leg is open.
        case held
        /// The INVITE went to one device or more, and the caller waits for a final answer.
        case forking
        /// The caller has its final answer from the server (487, 408) or from a device's 6xx, and the open legs
        /// are being cancelled: what they answer now is acknowledged and not passed on (a 2xx gets ACK and BYE).
        case cancelling
        /// A device answered 2xx (the leg of this branch) and the caller has it: in-dialog requests are relayed
        /// between them; the other legs are cancelled.
        case answered(branch: String)
        /// Over: the caller has a final answer and no leg is open, or the answered call was hung up. Kept a while
        /// to absorb retransmissions and acknowledge late answers.
        case ended(since: ContinuousClock.Instant)
    }

    let callID: String
    let aor: String
    /// The caller's INVITE as received.
    let invite: SIPRequest
    let callerFlow: ServerFlow
    /// The INVITE's server transaction key (its answers are stored there for retransmissions).
    let transactionKey: String
    /// The caller's top Via branch: a CANCEL or a non-2xx ACK for this INVITE carries it.
    let callerBranch: String
    /// The caller's From tag: an in-dialog request with it comes from the caller, one without from the device.
    let callerTag: String
    /// Ends the call fork timer once the call has a final answer.
    let forkTimer: StopSignal
    var phase: Phase = .held
    /// Every leg sent, open or not, oldest first.
    var legs: [DeviceLeg] = []
    /// The best non-2xx final answer a leg gave so far (RFC 3261 §16.7 step 6), for when every leg has answered.
    var best: SIPResponse?
    /// The last step reported for the call.
    var step: CallStep = .held
    /// Retransmits the server's own non-2xx final answer to the caller over UDP until its ACK (Timer G).
    var finalRetransmission: StopSignal?

    /// The index of the leg of this branch.
    func legIndex(_ branch: String) -> Int? { legs.firstIndex { $0.branch == branch } }

    /// The answered leg, once a device answered 2xx.
    var answeredLeg: DeviceLeg? {
        guard case .answered(let branch) = phase else { return nil }
        return legs.first { $0.branch == branch }
    }

    /// True while the caller waits for a final answer.
    var isPending: Bool {
        switch phase {
        case .held, .forking: return true
        case .cancelling, .answered, .ended: return false
        }
    }

    /// True when a leg is still waiting for the device's final answer.
    var hasOpenLeg: Bool { legs.contains(where: \.isOpen) }

    /// Moves the call to `ended`.
    mutating func finish() {
        phase = .ended(since: .now)
    }

    /// Whether `candidate` is a better final answer for the caller than `best` (RFC 3261 §16.7 step 6: a 6xx
    /// above all, then the lowest class; the first one within a class).
    static func isBetter(_ candidate: SIPResponse, than best: SIPResponse?) -> Bool {
        guard let best else { return true }
        func rank(_ status: Int) -> Int { status >= 600 ? 0 : status / 100 }
        return rank(candidate.statusCode) < rank(best.statusCode)
    }
}
