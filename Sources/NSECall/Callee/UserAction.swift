/// What the emulated user does once the phone rings (`nse device set --call-action`).
public enum UserAction: String, Sendable, Equatable, CaseIterable {
    /// Answers after the answer delay: 200 OK with a session.
    case answer
    /// Declines after the answer delay: 603 Decline.
    case decline
    /// Is busy: 486 Busy Here after the answer delay.
    case busy
    /// Lets it ring until the caller or the server gives up.
    case ignore
    /// Accepts in CallKit before the INVITE has arrived: the answer is postponed until it comes, then sent at
    /// once (Linphone's guide).
    case answerBeforeInvite = "answer-before-invite"
}
