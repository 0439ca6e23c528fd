import Logging
import NSEAppRegistration
import NSEDevice
import NSEJSON
import NSEPayload
import NSESIP
import NSESystem

/// A group-chat invitation (Flexisip's GC_MSG push, `chat-room-addr`): join the room the push names and keep it, as
/// liblinphone's extension does (`getNewChatRoomFromConfAddr`: the core registers, the room's focus sends its held
/// INVITE, the core accepts it and the room is created and joined).
///
/// The extension registers; the server hands over the room's INVITE it held for this device (Contact with
/// `isfocus`, the room's `Subject`, its participants as an RFC 5366 resource list); the extension answers 200 and
/// keeps the room (address, subject, participants) in the App Group store, where a later push for a message in the
/// room finds its subject. The invitation is then shown with the subject as its title. MESSAGEs the registration
/// brings meanwhile are kept in the store for their own pushes (answered 200 only once kept). Subject changes made
/// later reach the app itself (its SUBSCRIBE to the room); the extension reads the state the invitation carried.
struct RoomFetch: Sendable {
    let device: Device
    let rewriter: Rewriter
    /// The host, for its expiry notice.
    let host: HostLink?
    /// Stop waiting this long before the budget ends, as the message fetch (liblinphone: 25 s of 30).
    var fetchFraction: Double = 25.0 / 30.0

    /// How the wait for the room's INVITE ended.
    enum Joined: Sendable {
        /// Accepted: the room's address (its INVITE's `From`), subject and participants as its INVITE said them.
        case joined(address: String, subject: String, participants: [String])
        /// No INVITE from this room came before the deadline (or the expiry notice).
        case notInvited
        /// The device could not register: why.
        case unavailable(String)
    }

    /// Joins `room`, blocking the calling thread until it is done; the content to show.
    func fetch(room: String, request: ServiceRequest, logger: Logger) -> DeliveredContent {
        var logger = logger
        logger[metadataKey: "nse.part"] = "room"
        let start = SystemClock.monotonicNanoseconds()
        let deadline = Duration.milliseconds(Int64(Double(request.budgetMilliseconds) * fetchFraction))
        let joined = BlockingWait.run(reading: host) { [self, logger] in
            await join(room, within: deadline, logger: logger)
        }
        let milliseconds = SystemClock.millisecondsSince(start)
        var content: DeliveredContent
        switch joined {
        case .joined(let address, let subject, let participants):
            do {
                try device.cachedAppGroup().rooms.keep(address: address, subject: subject, participants: participants)
            } catch {
                logger.warning("room not kept in the App Group store", metadata: ["store.error": "\(error)"])
            }
            content = rewriter.chatRoomInvitation(room: address, subject: subject.isEmpty ? nil : subject)
            content.info = ["room_joined": true, "participants": .int(Int64(participants.count))]
        case .notInvited:
            content = rewriter.chatRoomInvitation(room: room, subject: nil)
            content.info = ["room_joined": false]
        case .unavailable(let reason):
            content = rewriter.chatRoomInvitation(room: room, subject: nil)
            content.info = ["room_joined": false, "error": .string(reason)]
        }
        content.info?["room_ms"] = .double((milliseconds * 100).rounded() / 100)
        return content
    }

    /// Registers and waits for the room's INVITE, accepting it; MESSAGEs that come meanwhile are kept.
    private func join(_ room: String, within deadline: Duration, logger: Logger) async -> Joined {
        guard let account = device.config.sip else {
            return .unavailable(
                ReasonCode.fetchUnavailable.reason("the device has no SIP account to join the room with"))
        }
        let registration: SIPRegistration
        do {
            registration = try AppRegistration.registration(
                for: device, account: account, password: try device.sipPassword())
        } catch {
            return .unavailable(ReasonCode.sipAccountInvalid.reason("\(error)"))
        }
        let store = try? device.cachedAppGroup().messages
        var configuration = AppRegistration.configuration(for: account)
        configuration.acceptsCalls = true
        configuration.messageAcceptor = { message in
            // Kept for its own push; 500 when it cannot be, so the server holds it for the next REGISTER.
            guard let store, (try? store.keep(StoredMessage(ReceivedContent(message)))) != nil else {
                return SIPMessageAnswer(statusCode: 500, reasonPhrase: "Not Stored")
            }
            return SIPMessageAnswer(statusCode: 200)
        }
        let agent = SIPUserAgent(
            configuration: configuration, eventLoopGroup: SIPUserAgent.processEventLoopGroup, logger: logger)
        // The host's expiry notice, as a stream the wait can end on.
        let (expiry, expired) = AsyncStream<Void>.makeStream()
        host?.onExpiry { expired.yield() }
        // The first task to decide wins: the room's INVITE accepted, the REGISTER refused, the deadline, the notice.
        let joined = await withTaskGroup(of: Joined?.self) { group -> Joined in
            group.addTask {
                for await call in agent.incomingCalls {
                    guard let from = call.invite.headers.from, Self.names(room, from.uri) else {
                        // A call, or another room's invitation: the app's, not this push's.
                        continue
                    }
                    guard await call.answer(contentType: nil, body: []) else { return .notInvited }
                    return Self.invitation(call.invite)
                }
                return nil
            }
            group.addTask {
                do {
                    let result = try await agent.register(registration)
                    guard (200..<300).contains(result.statusCode) else {
                        return .unavailable(
                            ReasonCode.sipRegisterFailed.reason("REGISTER answered \(result.statusCode)"))
                    }
                    return nil
                } catch {
                    return .unavailable(ReasonCode.sipRegisterFailed.reason("\(error)"))
                }
            }
            group.addTask {
                for await _ in expiry { return .notInvited }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return .notInvited
            }
            var outcome = Joined.notInvited
            for await answer in group {
                if let answer {
                    outcome = answer
                    break
                }
            }
            group.cancelAll()
            expired.finish()
            return outcome
        }
        host?.stopExpiryHandler()
        await agent.close()
        return joined
    }

    /// Whether the push's `chat-room-addr` names the room at `uri`: Flexisip sends the room's user part (the INVITE's
    /// `From` user, which liblinphone matches against its rooms' usernames); a whole address is compared whole.
    static func names(_ chatRoomAddress: String, _ uri: SIPURI) -> Bool {
        if chatRoomAddress.contains("@") { return RoomStore.key(chatRoomAddress) == RoomStore.key(uri.description) }
        return uri.user == chatRoomAddress
    }

    /// The room's address (`From`, without its tag), subject (`Subject`) and participants (the resource list in its
    /// body) from its INVITE.
    static func invitation(_ invite: SIPRequest) -> Joined {
        let address = invite.headers.from.map { RoomStore.key($0.uri.description) } ?? ""
        let subject = invite.headers["Subject"] ?? ""
        var participants: [String] = []
        if let type = invite.headers.contentType, type.lowercased().hasPrefix(SIPResourceList.contentType),
            let list = try? SIPResourceList(parsing: invite.body)
        {
            participants = list.uris.map(\.description)
        }
        return .joined(address: address, subject: subject, participants: participants)
    }
}
