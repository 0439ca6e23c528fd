/// Which end of a call this user agent is.
public enum SIPCallRole: String, Sendable, Equatable {
    /// It sent the INVITE.
    case caller
    /// It received the INVITE.
    case callee
}
