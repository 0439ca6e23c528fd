/// A dialog (RFC 3261 §12): what both ends of a call need to send requests inside it (BYE) and to recognise the
/// requests that belong to it.
public struct SIPDialog: Sendable, Hashable {
    /// The Call-ID.
    public var callID: String
    /// This end's tag (From tag of its requests).
    public var localTag: String
    /// The other end's tag.
    public var remoteTag: String
    /// This end's address (the From of its requests), with its tag.
    public var local: SIPNameAddress
    /// The other end's address (the To of its requests), with its tag.
    public var remote: SIPNameAddress
    /// Where the other end is reached: its Contact, the Request-URI of requests in the dialog.
    public var remoteTarget: SIPURI
    /// The Route headers of requests in the dialog, in the order they are sent (from the Record-Route).
    public var routeSet: [String]
    /// The CSeq number of this end's last request.
    public var localSequence: UInt32

    /// The identity used to match requests to dialogs: Call-ID, local tag, remote tag.
    public var id: String { SIPDialog.id(callID: callID, localTag: localTag, remoteTag: remoteTag) }

    /// The identity of a dialog from its three parts.
    public static func id(callID: String, localTag: String, remoteTag: String) -> String {
        "\(callID)|\(localTag)|\(remoteTag)"
    }

    /// The dialog a caller's INVITE and its 2xx answer set up (§12.1.2): the route set is the answer's
    /// Record-Route, reversed. Nil when the answer has no To tag or the INVITE no From tag.
    public init?(caller invite: SIPRequest, answer: SIPResponse) {
        guard let callID = invite.headers.callID, let from = invite.headers.from, let localTag = from.tag,
            let to = answer.headers.to, let remoteTag = to.tag
        else { return nil }
        self.callID = callID
        self.localTag = localTag
        self.remoteTag = remoteTag
        self.local = from
        self.remote = to
        self.remoteTarget = answer.headers.contacts.first?.uri ?? invite.uri
        self.routeSet = answer.headers.splitValues("Record-Route").reversed()
        self.localSequence = invite.headers.cseq?.sequence ?? 1
    }

    /// The dialog an incoming INVITE sets up once answered with `localTag` (§12.1.1): the route set is the
    /// INVITE's Record-Route in order. Nil when the INVITE has no From tag.
    public init?(callee invite: SIPRequest, localTag: String) {
        guard let callID = invite.headers.callID, let from = invite.headers.from, let remoteTag = from.tag,
            var to = invite.headers.to
        else { return nil }
        to.tag = localTag
        self.callID = callID
        self.localTag = localTag
        self.remoteTag = remoteTag
        self.local = to
        self.remote = from
        self.remoteTarget = invite.headers.contacts.first?.uri ?? from.uri
        self.routeSet = invite.headers.splitValues("Record-Route")
        self.localSequence = 0
    }

    /// Whether a request received belongs to this dialog (its To tag is this end's, its From tag the other's).
    public func contains(_ request: SIPRequest) -> Bool {
        request.headers.callID == callID && request.headers.to?.tag == localTag
            && request.headers.from?.tag == remoteTag
    }

    /// The next request of this end in the dialog (§12.2.1.1), without Via: Request-URI the remote target, the
    /// route set as Route, the next CSeq number.
    public mutating func nextRequest(_ method: String) -> SIPRequest {
        localSequence += 1
        return request(method, sequence: localSequence)
    }

    /// The ACK of the 2xx answer to the INVITE with CSeq `sequence` (§13.2.2.4): the INVITE's CSeq number.
    public func ack(sequence: UInt32) -> SIPRequest {
        request("ACK", sequence: sequence)
    }

    private func request(_ method: String, sequence: UInt32) -> SIPRequest {
        var request = SIPRequest(method: method, uri: remoteTarget)
        request.headers.add("Max-Forwards", "70")
        request.headers.add("From", local.description)
        request.headers.add("To", remote.description)
        request.headers.add("Call-ID", callID)
        request.headers.add("CSeq", SIPCSeq(sequence: sequence, method: method).description)
        for route in routeSet { request.headers.add("Route", route) }
        return request
    }
}
