import NSESIP

/// The chat rooms the server is the focus of, by URI, with the two other ways in: the Via branch of a room's INVITE
/// to a device and of its NOTIFYs (their answers carry it), and the subscriptions to each room's state.
///
/// A value owned by `SIPServer`'s actor, like `CallTable`: it keeps state; the server decides, stores and sends.
struct RoomTable {
    private(set) var rooms: [String: ChatRoom] = [:]
    private var invitations: [String: RoomInvitation] = [:]
    private var subscriptions: [String: RoomSubscription] = [:]
    /// The NOTIFYs awaiting an answer: branch → subscription key.
    private var notifies: [String: String] = [:]
    /// The ACKs of the 2xx answers to the room's INVITEs, by the INVITE's branch: a device that retransmits its
    /// 2xx (over UDP, until the ACK reaches it) gets the ACK again (RFC 3261 §13.2.2.4).
    private var acknowledgements: [String: (flow: ServerFlow, ack: [UInt8])] = [:]

    subscript(uri: String) -> ChatRoom? {
        get { rooms[uri] }
        set { rooms[uri] = newValue }
    }

    /// Rooms that wait to invite `device` of `aor`: it is a participant, and the device neither answered finally
    /// nor has an INVITE on its way.
    func waitingInvitations(aor: String, device: String) -> [String] {
        rooms.values.filter { room in
            guard let participant = room.participant(aor) else { return false }
            switch participant.devices[device] {
            case nil, .held: return true
            case .inviting, .joined, .declined: return false
            }
        }.map(\.uri).sorted()
    }

    // MARK: - invitations

    mutating func addInvitation(_ invitation: RoomInvitation, branch: String) { invitations[branch] = invitation }

    func invitation(branch: String) -> RoomInvitation? { invitations[branch] }

    /// Ends an invitation's client transaction (answered, timed out); nil when it already ended.
    mutating func removeInvitation(branch: String) -> RoomInvitation? {
        let invitation = invitations.removeValue(forKey: branch)
        invitation?.retransmission.stop()
        return invitation
    }

    // MARK: - subscriptions

    subscript(subscription key: String) -> RoomSubscription? {
        get { subscriptions[key] }
        set { subscriptions[key] = newValue }
    }

    /// The live subscriptions to `room` at `now` (Unix seconds).
    func subscriptions(to room: String, now: Int64) -> [RoomSubscription] {
        subscriptions.values.filter { $0.room == room && $0.expiresAt > now }.sorted { $0.key < $1.key }
    }

    /// A NOTIFY sent in a subscription, awaiting its answer.
    mutating func notifySent(branch: String, subscription key: String) {
        if notifies.count > 4096 { notifies = [:] }
        notifies[branch] = key
    }

    /// The subscription a NOTIFY's answer belongs to (the NOTIFY is then no longer awaited); nil when none.
    mutating func notifyAnswered(branch: String) -> String? { notifies.removeValue(forKey: branch) }

    /// Keeps the ACK sent for a 2xx to the INVITE of `branch`, for the device's retransmissions of that 2xx.
    mutating func acknowledged(branch: String, flow: ServerFlow, ack: [UInt8]) {
        if acknowledgements.count > 1024 { acknowledgements = [:] }
        acknowledgements[branch] = (flow, ack)
    }

    /// The ACK already sent for a 2xx to the INVITE of `branch`, if any.
    func acknowledgement(branch: String) -> (flow: ServerFlow, ack: [UInt8])? { acknowledgements[branch] }

    /// True when `branch` is one of a room's transactions (an INVITE, answered or not, or a NOTIFY).
    func owns(branch: String) -> Bool {
        invitations[branch] != nil || notifies[branch] != nil || acknowledgements[branch] != nil
    }

    /// Drops subscriptions that ended by `now` (Unix seconds); returns them.
    mutating func sweep(now: Int64) -> [RoomSubscription] {
        let ended = subscriptions.values.filter { $0.expiresAt <= now }
        for subscription in ended { subscriptions[subscription.key] = nil }
        return ended
    }

    /// Calls off every invitation's timers (the server is stopping).
    mutating func stopAll() {
        for (_, invitation) in invitations { invitation.retransmission.stop() }
        invitations = [:]
    }
}
