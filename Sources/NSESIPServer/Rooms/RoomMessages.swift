import NSESIP

/// The requests a room sends as the focus (liblinphone's server chat room): the INVITE inviting a participant
/// device, the NOTIFY of its state, and the MESSAGE it passes on to a participant.
enum RoomMessages {
    /// The methods a room takes.
    static let allowed = "INVITE, ACK, BYE, SUBSCRIBE, NOTIFY, REFER, MESSAGE, UPDATE"

    /// The room as a Contact: its URI with `isfocus` (RFC 4579 §3), as liblinphone's conference server writes it.
    static func focusContact(_ room: String) -> String { "<\(room)>;isfocus" }

    /// The room's INVITE to one device of `aor`: From the room (the invitation's tag), To the participant,
    /// `Contact: <room>;isfocus`, the subject, and the participants as a resource list (RFC 5366).
    static func invitation(
        room: ChatRoom, aor: String, contact: SIPURI, over flow: ServerFlow, branch: String, callID: String,
        tag: String
    ) -> SIPRequest {
        let list = SIPResourceList(uris: room.participants.compactMap { try? SIPURI(parsing: $0.aor) })
        var invite = SIPRequest(method: "INVITE", uri: contact, body: list.serialized())
        invite.headers.add("Via", CallMessages.via(over: flow, branch: branch))
        invite.headers.add("Max-Forwards", "70")
        invite.headers.add("From", "<\(room.uri)>;tag=\(tag)")
        invite.headers.add("To", "<\(aor)>")
        invite.headers.add("Call-ID", callID)
        invite.headers.add("CSeq", SIPCSeq(sequence: 1, method: "INVITE").description)
        invite.headers.add("Contact", focusContact(room.uri))
        invite.headers.add("Subject", room.subject)
        invite.headers.add("Allow", allowed)
        invite.headers.add("Content-Type", SIPResourceList.contentType)
        invite.headers.add("Content-Disposition", SIPResourceList.disposition)
        return invite
    }

    /// A NOTIFY carrying `info` in `subscription` (RFC 6665 §4.2.2): `Subscription-State` active with the seconds
    /// left, or terminated with `reason`.
    static func notify(
        _ info: SIPConferenceInfo, in subscription: RoomSubscription, over flow: ServerFlow, branch: String,
        secondsLeft: Int64, terminated reason: String? = nil
    ) -> SIPRequest {
        var notify = SIPRequest(method: "NOTIFY", uri: subscription.target, body: info.serialized())
        notify.headers.add("Via", CallMessages.via(over: flow, branch: branch))
        notify.headers.add("Max-Forwards", "70")
        notify.headers.add("From", "<\(subscription.room)>;tag=\(subscription.roomTag)")
        notify.headers.add("To", "<\(subscription.subscriber)>;tag=\(subscription.subscriberTag)")
        notify.headers.add("Call-ID", subscription.callID)
        notify.headers.add("CSeq", SIPCSeq(sequence: subscription.sequence, method: "NOTIFY").description)
        notify.headers.add("Contact", focusContact(subscription.room))
        notify.headers.add("Event", "conference")
        notify.headers.add(
            "Subscription-State", reason.map { "terminated;reason=\($0)" } ?? "active;expires=\(max(0, secondsLeft))")
        notify.headers.add("Content-Type", SIPConferenceInfo.contentType)
        return notify
    }

    /// A participant's MESSAGE to the room as the room passes it on to another participant: From the room (the
    /// peer, as liblinphone's server chat room forces it), To that participant, a Call-ID of its own, the body
    /// and its Content-Type unchanged (a CPIM body keeps the real sender in its own `From:`), and liblinphone's
    /// `Session-mode: true`.
    static func fannedOut(_ request: SIPRequest, room: String, to aor: String, callID: String, tag: String)
        throws(SIPError) -> SIPRequest
    {
        var copy = SIPRequest(method: "MESSAGE", uri: try SIPURI(parsing: aor), body: request.body)
        copy.headers.add("From", "<\(room)>;tag=\(tag)")
        copy.headers.add("To", "<\(aor)>")
        copy.headers.add("Call-ID", callID)
        copy.headers.add("CSeq", SIPCSeq(sequence: 1, method: "MESSAGE").description)
        if let contentType = request.headers.contentType { copy.headers.add("Content-Type", contentType) }
        copy.headers.add("Session-mode", "true")
        return copy
    }
}
