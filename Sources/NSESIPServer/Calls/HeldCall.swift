import NSESIP

/// One incoming call through the server (Flexisip's call fork, with one device leg): the caller's INVITE, held
/// until a device can take it, then relayed to that device, whose answers go back to the caller; once answered,
/// the dialog's requests (ACK, BYE, re-INVITE) pass through the server both ways (it record-routes).
///
/// The server holds a call when its AOR's bindings have push parameters (the device is asleep and gets a push)
/// and forwards it at once to a live binding without them. The caller hears 100 Trying at once, then what the
/// device answers; the server itself answers 487 when the caller cancels, and 408 at the call fork timeout.
struct HeldCall {
    /// The INVITE the server sent to one device, and how to reach that device.
    struct DeviceLeg {
        /// The Via branch of the server's INVITE (and of its CANCEL).
        var branch: String
        var flow: ServerFlow
        /// The INVITE as sent, for the ACK of a non-2xx answer and the CANCEL.
        var invite: SIPRequest
        /// Calls off the INVITE's retransmissions (a provisional or final answer came).
        var retransmission: StopSignal
    }

    /// Where the call is.
    enum Phase {
        /// Waiting for a device to register (the push is out).
        case held
        /// The INVITE went to the device, which has not answered yet.
        case calling(DeviceLeg)
        /// The device sent a provisional answer (ringing).
        case ringing(DeviceLeg)
        /// The caller has its final answer from the server (487 or 408) and the device's INVITE is being
        /// cancelled: whatever it answers now is acknowledged and not passed on (a 2xx gets ACK and BYE).
        case cancelling(DeviceLeg)
        /// The device answered 2xx and the caller has it: in-dialog requests are relayed between them.
        case answered(DeviceLeg)
        /// Over: the caller has a final answer, or the answered call was hung up. Kept a while to absorb
        /// retransmissions, with the device leg it had (its late answers are still acknowledged).
        case ended(since: ContinuousClock.Instant, leg: DeviceLeg?)
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
    /// The last step reported for the call.
    var step: CallStep = .held
    /// Retransmits the server's own non-2xx final answer to the caller over UDP until its ACK (Timer G).
    var finalRetransmission: StopSignal?

    /// The device leg, in any phase that has one.
    var leg: DeviceLeg? {
        switch phase {
        case .calling(let leg), .ringing(let leg), .cancelling(let leg), .answered(let leg): return leg
        case .ended(_, let leg): return leg
        case .held: return nil
        }
    }

    /// Moves the call to `ended`, keeping its device leg.
    mutating func finish() {
        phase = .ended(since: .now, leg: leg)
    }

    /// True while the caller waits for a final answer.
    var isPending: Bool {
        switch phase {
        case .held, .calling, .ringing: return true
        case .cancelling, .answered, .ended: return false
        }
    }
}
