/// A step of a chat room, as its event reports it (the `event` name of `nse sip-server --events`).
public enum RoomStep: String, Sendable, Hashable {
    /// An INVITE to the conference factory made the room; `aor` is its creator, its first admin.
    case created = "room_created"
    /// The room's INVITE went to a participant device.
    case invited
    /// A participant device sleeps (it was pushed GC_MSG) or is offline, or its INVITE got no answer (`status`
    /// 408, Timer B): the INVITE waits for its next REGISTER.
    case invitationHeld = "invitation_held"
    /// The device answered 2xx.
    case joined
    /// The device answered with a final error (`status`): it is not invited again.
    case declined
    /// An admin changed the subject.
    case subject
    /// An admin added a participant (REFER).
    case participantAdded = "participant_added"
    /// An admin removed a participant (REFER with `method=BYE`).
    case participantRemoved = "participant_removed"
}
