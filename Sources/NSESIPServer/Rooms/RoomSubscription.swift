import NSESIP

/// A subscription to a room's state (RFC 6665, `Event: conference`): the dialog the room's NOTIFYs go in.
struct RoomSubscription: Sendable {
    var room: String
    var callID: String
    /// The subscriber's tag (its From tag) and the room's (the To tag of the 200).
    var subscriberTag: String
    var roomTag: String
    /// The subscriber's address (From, without its tag) and where its NOTIFYs go (its Contact).
    var subscriber: String
    var target: SIPURI
    var flow: ServerFlow
    /// The room's last CSeq in this dialog.
    var sequence: UInt32 = 0
    /// When it ends (Unix seconds).
    var expiresAt: Int64

    /// Its key in the table: the dialog's Call-ID and the subscriber's tag.
    var key: String { Self.key(callID: callID, subscriberTag: subscriberTag) }

    static func key(callID: String, subscriberTag: String) -> String { callID + "|" + subscriberTag }
}
