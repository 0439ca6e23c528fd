import NSESIP

/// An INVITE the room (the focus, a UAC) sent one participant device: the client transaction its answer ends.
struct RoomInvitation: Sendable {
    var room: String
    var aor: String
    /// The device's registrar binding key.
    var device: String
    var flow: ServerFlow
    /// The INVITE as sent (its ACK is built from it).
    var invite: SIPRequest
    /// Calls off its retransmissions and Timer B.
    var retransmission: StopSignal
}
