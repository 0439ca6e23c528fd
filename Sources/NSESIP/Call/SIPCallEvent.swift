/// What happens to a call, as one end's user agent sees it; the stream of a call ends after its last event
/// (`refused`, `cancelled`, `remoteHangUp`, `failed`, or once this end hung up).
public enum SIPCallEvent: Sendable, Equatable {
    /// Caller: a provisional answer to the INVITE (100 Trying, 180 Ringing, 183 Session Progress).
    case progress(SIPResponse)
    /// Caller: the INVITE was answered 2xx; the ACK is sent: the call is set up.
    case answered(SIPResponse)
    /// Caller: the INVITE got this final non-2xx answer (487 once it was cancelled).
    case refused(SIPResponse)
    /// Callee: the ACK of this end's 2xx came: the call is set up.
    case confirmed
    /// Callee: the caller cancelled the INVITE before it was answered; its `Reason` header, if any (RFC 3326:
    /// `SIP;cause=200;text="Call completed elsewhere"` when another device answered).
    case cancelled(reason: String?)
    /// Either end: the other end hung up (its BYE was answered 200).
    case remoteHangUp
    /// Either end: the transaction or the connection failed (no answer within Timer B, connection closed…).
    case failed(SIPError)
}
