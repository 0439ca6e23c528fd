/// One call of a ``SIPUserAgent``: where it stands, and what its user agent needs to go on with it.
struct SIPCallState {
    /// Where the call stands.
    enum Phase: Equatable {
        /// Caller: the INVITE is out; `proceeding` once a provisional answer came, `cancelWanted` once the caller
        /// asked to cancel before one had (a CANCEL waits for it, §9.1).
        case inviting(proceeding: Bool, cancelWanted: Bool)
        /// Callee: the INVITE is here, not answered finally yet; `ringing` once 180 is sent.
        case offered(ringing: Bool)
        /// Callee: answered 2xx, waiting for the ACK.
        case answering
        /// The call is set up (the ACK sent, or received).
        case established
        /// Over: nothing more is sent or delivered.
        case ended
    }

    let role: SIPCallRole
    var phase: Phase
    /// The connection the call runs on.
    let layer: SIPTransactionLayer
    /// The call's events.
    let events: AsyncStream<SIPCallEvent>.Continuation
    /// Caller: the INVITE last sent (a CANCEL copies it); callee: the INVITE received.
    var invite: SIPRequest
    /// Callee: the INVITE's server transaction, which every answer goes on.
    var transaction: SIPIncomingRequest?
    /// This end's tag.
    let localTag: String
    /// The dialog, once a 2xx set it up.
    var dialog: SIPDialog?
    /// This end's session description (answered again to a re-INVITE).
    var localBody: [UInt8] = []
    var localContentType: String?

    /// Ends the call with its last event.
    mutating func end(with event: SIPCallEvent?) {
        guard phase != .ended else { return }
        phase = .ended
        if let event { events.yield(event) }
        events.finish()
    }
}
