import NSESIP

/// A chat room the server is the focus of, as Flexisip's conference server keeps a liblinphone group chat room:
/// its URI, subject and participants, and where each participant device stands with the room's invitation.
struct ChatRoom: Sendable {
    /// Where one participant device stands with the invitation.
    enum DeviceState: Sendable, Equatable {
        /// Waiting for the device to register (it sleeps and was pushed, or its INVITE got no answer).
        case held
        /// The INVITE is on its way: the branch of its client transaction.
        case inviting(branch: String)
        /// The device answered 2xx.
        case joined
        /// The device answered with a final error.
        case declined(status: Int)

        /// Joined or declined: the device is not invited again.
        var isFinal: Bool {
            switch self {
            case .joined, .declined: return true
            case .held, .inviting: return false
            }
        }
    }

    /// One participant: an address of record and its devices (registrar binding keys) the room knows of.
    struct Participant: Sendable {
        var aor: String
        var isAdmin: Bool
        var devices: [String: DeviceState] = [:]
        /// The Call-ID and From tag of the room's INVITEs to its devices (one fork per device, as a proxy forks one
        /// INVITE), made when it is first invited; a restart makes new ones.
        var invitation: (callID: String, tag: String)? = nil
    }

    /// The room's URI as an AOR key (`sip:chatroom-…@domain`): the focus, and the peer of its messages.
    var uri: String
    var subject: String
    /// In the order they were added; the creator first.
    var participants: [Participant]
    /// When it was created (Unix seconds).
    var createdAt: Int64
    /// The `version` of the last conference-info document sent about it (RFC 4575 §4.1: each one higher).
    var version: Int = 0

    /// The participant with this AOR key.
    func participant(_ aor: String) -> Participant? { participants.first { $0.aor == aor } }

    /// True when `aor` is a participant and an admin.
    func isAdmin(_ aor: String) -> Bool { participant(aor)?.isAdmin ?? false }

    /// Sets one device's state (the participant must exist).
    mutating func set(_ state: DeviceState?, aor: String, device: String) {
        guard let index = participants.firstIndex(where: { $0.aor == aor }) else { return }
        participants[index].devices[device] = state
    }

    /// The full state as RFC 4575 describes it, with the next version (which the caller records).
    func conferenceInfo(version: Int) -> SIPConferenceInfo {
        SIPConferenceInfo(
            entity: uri, version: version, subject: subject,
            users: participants.map {
                SIPConferenceInfo.User(entity: $0.aor, roles: $0.isAdmin ? ["admin", "participant"] : ["participant"])
            })
    }
}
