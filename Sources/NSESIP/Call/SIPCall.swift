/// One call of a ``SIPUserAgent``, as the app on its end drives it: the caller's (from
/// ``SIPUserAgent/call(_:)``) or the callee's (from ``SIPUserAgent/incomingCalls``).
///
/// Its ``events`` say what the other end and the network do; its methods are what this end's user does. A method
/// that does not fit the call's role or phase (answering a call already cancelled, cancelling one already
/// answered) does nothing and returns false: the events say what happened instead.
public final class SIPCall: Sendable {
    /// Which end this is.
    public let role: SIPCallRole
    /// The call's Call-ID.
    public let callID: String
    /// Callee: the INVITE as received (its From, its offer); caller: the first INVITE sent.
    public let invite: SIPRequest
    /// What happens to the call, in order; ends after the last event.
    public let events: AsyncStream<SIPCallEvent>
    let key: String
    private let agent: SIPUserAgent

    init(role: SIPCallRole, key: String, invite: SIPRequest, events: AsyncStream<SIPCallEvent>, agent: SIPUserAgent) {
        self.role = role
        self.key = key
        self.callID = invite.headers.callID ?? ""
        self.invite = invite
        self.events = events
        self.agent = agent
    }

    /// Callee: sends 180 Ringing.
    @discardableResult
    public func ring() async -> Bool {
        await agent.ring(key)
    }

    /// Callee: answers 200 OK with this end's session description (none: `contentType` nil and no body, as a
    /// chat room's invitation is accepted); `confirmed` follows when the ACK comes.
    @discardableResult
    public func answer(contentType: String? = "application/sdp", body: [UInt8]) async -> Bool {
        await agent.answer(key, contentType: contentType, body: body)
    }

    /// Callee: refuses the call with a final status (603 Decline, 486 Busy Here…).
    @discardableResult
    public func reject(statusCode: Int) async -> Bool {
        await agent.reject(key, statusCode: statusCode)
    }

    /// Caller: cancels the INVITE before it is answered (§9.1); `refused` with 487 follows. Asked before any
    /// provisional answer came, the CANCEL waits for one.
    @discardableResult
    public func cancel() async -> Bool {
        await agent.cancel(key)
    }

    /// Either end: hangs up a call that is set up (BYE, §15.1); returns the BYE's final status, nil when there
    /// was nothing to hang up or the BYE got no answer.
    @discardableResult
    public func hangUp() async -> Int? {
        await agent.hangUp(key)
    }
}
