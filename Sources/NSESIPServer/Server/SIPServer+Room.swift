import Logging
import NSEAPNs
import NSECrypto
import NSESIP
import NSESystem

/// The chat room path (RFC 4579 conference focus, as Flexisip's conference server runs liblinphone's group chat
/// rooms): an INVITE to the conference factory makes a room; the room INVITEs each participant device (a sleeping
/// one is pushed `GC_MSG` and gets the INVITE when it registers); `SUBSCRIBE` with `Event: conference` gets its
/// state as RFC 4575 conference-info; an admin changes the subject by (re-)INVITE or UPDATE, and the participants
/// by REFER; a participant's MESSAGE to the room is held and passed on to every other participant's devices.
/// `ChatRoom` is a room's state, `RoomTable` the rooms, `RoomMessages` what is sent.
extension SIPServer {
    /// Where a request for the chat room path goes.
    enum RoomTarget {
        /// The conference factory; rooms it makes are in `domain`.
        case factory(domain: String)
        case room(String)
        /// A `chatroom-…` address the server does not know (404).
        case unknownRoom
    }

    /// The longest a subscription to a room lasts, and how long one without `Expires` does (RFC 6665 §4.1.2.1).
    static let roomSubscriptionMaxExpires: Int64 = 86_400
    static let roomSubscriptionDefaultExpires: Int64 = 3_600
    /// The most participants a room may have.
    static let roomMaxParticipants = 256

    /// The chat rooms, each with its subject and participants (admins marked).
    public func chatRooms() -> [(uri: String, subject: String, participants: [(aor: String, admin: Bool)])] {
        rooms.rooms.values.sorted { $0.uri < $1.uri }.map { room in
            (room.uri, room.subject, room.participants.map { ($0.aor, $0.isAdmin) })
        }
    }

    /// The room path's part of `request`, or nil when it is not one (a room, or the factory, as its Request-URI).
    func roomTarget(of request: SIPRequest) -> RoomTarget? {
        let method = request.method.uppercased()
        guard ["INVITE", "UPDATE", "SUBSCRIBE", "REFER", "MESSAGE", "BYE"].contains(method) else { return nil }
        let uri = request.uri
        let key = SIPServer.aorKey(uri)
        if let factory = configuration.conferenceFactory {
            if key == SIPServer.aorKey(factory) { return .factory(domain: ASCII.lowercased(factory.host)) }
        } else if uri.user == "conference-factory" {
            return .factory(domain: ASCII.lowercased(uri.host))
        }
        if rooms[key] != nil { return .room(key) }
        if uri.user?.hasPrefix("chatroom-") == true { return .unknownRoom }
        return nil
    }

    func handleRoomRequest(_ request: SIPRequest, target: RoomTarget, flow: ServerFlow, transactionKey: String) {
        let method = request.method.uppercased()
        switch (target, method) {
        case (.unknownRoom, _):
            respond(request, flow: flow, transactionKey: transactionKey, status: 404, reason: "No Such Chat Room")
        case (.factory(let domain), "INVITE"):
            createRoom(request, domain: domain, flow: flow, transactionKey: transactionKey)
        case (.factory, _):
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 405, extraHeaders: [("Allow", "INVITE")])
        case (.room(let uri), "INVITE"), (.room(let uri), "UPDATE"):
            joinOrChangeSubject(request, room: uri, flow: flow, transactionKey: transactionKey)
        case (.room(let uri), "SUBSCRIBE"):
            subscribe(request, room: uri, flow: flow, transactionKey: transactionKey)
        case (.room(let uri), "REFER"):
            refer(request, room: uri, flow: flow, transactionKey: transactionKey)
        case (.room(let uri), "MESSAGE"):
            fanOut(request, room: uri, flow: flow, transactionKey: transactionKey)
        case (.room, _):
            // A device leaving the room's session (BYE): it stays a participant, as in liblinphone.
            respond(request, flow: flow, transactionKey: transactionKey, status: 200)
        }
    }

    // MARK: - the factory

    /// An INVITE to the factory: its `Subject`, and a resource list of participants (RFC 5366); the sender is the
    /// room's first participant and admin. The room is stored before the 200, whose Contact is the room.
    private func createRoom(_ request: SIPRequest, domain: String, flow: ServerFlow, transactionKey: String) {
        guard let from = request.headers.from else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 400)
            return
        }
        let creator = SIPServer.aorKey(from.uri)
        guard let type = request.headers.contentType, ASCII.lowercased(type).hasPrefix(SIPResourceList.contentType)
        else {
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 415,
                extraHeaders: [("Accept", SIPResourceList.contentType)])
            return
        }
        let list: SIPResourceList
        do { list = try SIPResourceList(parsing: request.body) } catch {
            logger.info(
                "sip server refused a chat room's participant list",
                metadata: ["sip.call_id": "\(request.headers.callID ?? "")", "sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 400, reason: "Bad Participant List")
            return
        }
        var participants = [ChatRoom.Participant(aor: creator, isAdmin: true)]
        for uri in list.uris {
            let aor = SIPServer.aorKey(uri)
            if !participants.contains(where: { $0.aor == aor }) {
                participants.append(ChatRoom.Participant(aor: aor, isAdmin: false))
            }
        }
        guard participants.count <= Self.roomMaxParticipants else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 413, reason: "Too Many Participants")
            return
        }
        let uri: String
        do { uri = "sip:chatroom-\(try SecureRandom.hex(8))@\(domain)" } catch {
            logger.error("sip server has no secure randomness for a chat room", metadata: ["sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 500)
            return
        }
        var room = ChatRoom(
            uri: uri, subject: request.headers["Subject"] ?? "", participants: participants,
            createdAt: SystemClock.unixSeconds())
        // The device that created it is in its session already.
        if let device = deviceKey(aor: creator, flow: flow) { room.set(.joined, aor: creator, device: device) }
        do { try database?.saveChatRoom(room) } catch {
            logger.error("sip server cannot persist a chat room", metadata: ["sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 500, reason: "Room Not Stored")
            return
        }
        rooms[uri] = room
        respond(
            request, flow: flow, transactionKey: transactionKey, status: 200,
            extraHeaders: [("Allow", RoomMessages.allowed)], contacts: [RoomMessages.focusContact(uri)])
        emit(.room(room: uri, step: .created, aor: creator, device: nil, status: nil))
        logger.info(
            "sip server chat room created",
            metadata: ["sip.room": "\(uri)", "sip.aor": "\(creator)", "sip.participants": "\(participants.count)"])
        for participant in participants { invite(participant.aor, to: uri) }
    }

    /// The binding key of the device of `aor` that sent a request over `flow`, if it is registered over it.
    private func deviceKey(aor: String, flow: ServerFlow) -> String? {
        registrar.activeBindings(aor: aor).last { $0.flow?.key == flow.key }?.key
    }

    // MARK: - invitations

    /// Invites the devices of `aor` that have not answered yet: a live one without push parameters at once, a
    /// sleeping one is pushed `GC_MSG` and gets the INVITE when it registers, an offline one when it registers.
    private func invite(_ aor: String, to uri: String) {
        guard var room = rooms[uri], let index = room.participants.firstIndex(where: { $0.aor == aor }) else { return }
        if room.participants[index].invitation == nil {
            room.participants[index].invitation = (SIPIdentifiers.callID(), SIPIdentifiers.tag())
            rooms[uri] = room
        }
        let bindings = registrar.activeBindings(aor: aor)
        if bindings.isEmpty { emit(.room(room: uri, step: .invitationHeld, aor: aor, device: nil, status: nil)) }
        var pushed = Set<String>()
        for binding in bindings {
            let state = rooms[uri]?.participant(aor)?.devices[binding.key]
            guard state == nil || state == .held else { continue }
            if binding.push == nil, let flow = binding.flow, flow.isLive {
                sendInvitation(room: uri, aor: aor, device: binding.key, contact: binding.contact.uri, over: flow)
                continue
            }
            rooms[uri]?.set(.held, aor: aor, device: binding.key)
            emit(.room(room: uri, step: .invitationHeld, aor: aor, device: binding.key, status: nil))
            if let push = binding.push {
                pushInvitation(room: uri, aor: aor, binding: binding, push: push, pushed: &pushed)
            }
        }
    }

    /// Flexisip's push for a group chat INVITE: the alert with loc-key `GC_MSG` (or the binding's
    /// `pn-groupchat-str`), the INVITE's Call-ID, and `chat-room-addr` the room's user part (Flexisip's
    /// `PushInfo`: `sip_from->a_url->url_user`; liblinphone matches it against the room's username).
    private func pushInvitation(
        room uri: String, aor: String, binding: Registrar.Binding, push: PushParameters, pushed: inout Set<String>
    ) {
        guard let room = rooms[uri], let invitation = room.participant(aor)?.invitation else { return }
        let locKey = binding.contact.uri.parameters.value(of: "pn-groupchat-str").flatMap { $0.isEmpty ? nil : $0 }
        guard
            let plan = pushSender.planRoomInvitation(
                room: uri, callID: invitation.callID, aor: aor, push: push, instance: binding.instance,
                locKey: locKey ?? "GC_MSG")
        else { return }
        if case .send(let job) = plan, !pushed.insert(job.destination).inserted { return }
        sendPush(plan)
    }

    /// Sends the room's INVITE to one device as an INVITE client transaction (Timer A retransmissions over UDP;
    /// at Timer B, or when the flow closes, the device is held again until it registers).
    private func sendInvitation(room uri: String, aor: String, device: String, contact: SIPURI, over flow: ServerFlow) {
        guard let room = rooms[uri], let invitation = room.participant(aor)?.invitation else { return }
        let branch = SIPIdentifiers.branch()
        let invite = RoomMessages.invitation(
            room: room, aor: aor, contact: contact, over: flow, branch: branch, callID: invitation.callID,
            tag: invitation.tag)
        let bytes = invite.serialized()
        let stop = StopSignal()
        rooms[uri]?.set(.inviting(branch: branch), aor: aor, device: device)
        rooms.addInvitation(
            RoomInvitation(room: uri, aor: aor, device: device, flow: flow, invite: invite, retransmission: stop),
            branch: branch)
        flow.send(bytes)
        emit(.room(room: uri, step: .invited, aor: aor, device: device, status: nil))
        logger.info(
            "sip server chat room invitation sent",
            metadata: ["sip.room": "\(uri)", "sip.aor": "\(aor)", "sip.transport": "\(flow.kind.rawValue)"])
        retransmitInvite(bytes, over: flow, until: stop) { server in
            await server.invitationUnanswered(branch: branch)
        }
    }

    /// No answer (Timer B) or the flow closed: the device is held again, for its next REGISTER.
    private func invitationUnanswered(branch: String) {
        guard let invitation = rooms.removeInvitation(branch: branch) else { return }
        rooms[invitation.room]?.set(.held, aor: invitation.aor, device: invitation.device)
        emit(
            .room(
                room: invitation.room, step: .invitationHeld, aor: invitation.aor, device: invitation.device,
                status: 408))
    }

    /// Sends the invitations of every room waiting for the device of `aor` that just registered over `flow`.
    func deliverRoomInvitations(aor: String, flow: ServerFlow, contact: SIPURI) {
        guard let device = registrar.activeBindings(aor: aor).last(where: { $0.contact.uri == contact })?.key else {
            return
        }
        for uri in rooms.waitingInvitations(aor: aor, device: device) {
            sendInvitation(room: uri, aor: aor, device: device, contact: contact, over: flow)
        }
    }

    // MARK: - answers

    /// Takes a response to a room's INVITE or NOTIFY; false when it is someone else's.
    func handleRoomResponse(_ response: SIPResponse, branch: String?) -> Bool {
        guard let branch, rooms.owns(branch: branch) else { return false }
        if let key = rooms.notifyAnswered(branch: branch) {
            // A subscriber that no longer knows the dialog, or cannot be reached, is dropped (RFC 6665 §4.2.2).
            if response.statusCode >= 300 { rooms[subscription: key] = nil }
            return true
        }
        guard response.statusCode >= 200, let invitation = rooms.removeInvitation(branch: branch) else {
            // A retransmitted 2xx: its ACK again.
            if (200..<300).contains(response.statusCode), let sent = rooms.acknowledgement(branch: branch) {
                sent.flow.send(sent.ack)
            }
            return true
        }
        let (uri, aor, device) = (invitation.room, invitation.aor, invitation.device)
        let status = response.statusCode
        if (200..<300).contains(status) {
            let ack = CallMessages.dialogRequest(
                "ACK", of: invitation.invite, answer: response, over: invitation.flow, sequence: 1
            ).serialized()
            invitation.flow.send(ack)
            rooms.acknowledged(branch: branch, flow: invitation.flow, ack: ack)
            rooms[uri]?.set(.joined, aor: aor, device: device)
        } else {
            invitation.flow.send(CallMessages.ack(of: invitation.invite, answer: response).serialized())
            rooms[uri]?.set(.declined(status: status), aor: aor, device: device)
        }
        if let room = rooms[uri] {
            do { try database?.saveChatRoom(room) } catch {
                logger.error("sip server cannot persist a chat room", metadata: ["sip.error": "\(error)"])
            }
        }
        let step: RoomStep = (200..<300).contains(status) ? .joined : .declined
        emit(.room(room: uri, step: step, aor: aor, device: device, status: status))
        logger.info(
            "sip server chat room invitation answered",
            metadata: ["sip.room": "\(uri)", "sip.aor": "\(aor)", "sip.status": "\(status)"])
        return true
    }

    // MARK: - changes

    /// An INVITE or UPDATE to the room from a participant: a `Subject` other than the room's changes it (admins
    /// only: 403 otherwise); the device that sent it is in the room's session.
    private func joinOrChangeSubject(_ request: SIPRequest, room uri: String, flow: ServerFlow, transactionKey: String)
    {
        guard let room = rooms[uri], let from = request.headers.from else { return }
        let aor = SIPServer.aorKey(from.uri)
        guard room.participant(aor) != nil else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 403, reason: "Not A Participant")
            return
        }
        var changed = room
        if let device = deviceKey(aor: aor, flow: flow) { changed.set(.joined, aor: aor, device: device) }
        let subject = request.headers["Subject"]
        let newSubject = subject.map { $0 != room.subject } ?? false
        if newSubject {
            guard room.isAdmin(aor), let subject else {
                respond(request, flow: flow, transactionKey: transactionKey, status: 403, reason: "Not An Admin")
                return
            }
            changed.subject = subject
        }
        do { try database?.saveChatRoom(changed) } catch {
            logger.error("sip server cannot persist a chat room", metadata: ["sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 500, reason: "Room Not Stored")
            return
        }
        rooms[uri] = changed
        let contacts = request.method.uppercased() == "INVITE" ? [RoomMessages.focusContact(uri)] : []
        respond(
            request, flow: flow, transactionKey: transactionKey, status: 200,
            extraHeaders: [("Allow", RoomMessages.allowed)], contacts: contacts)
        guard newSubject else { return }
        emit(.room(room: uri, step: .subject, aor: aor, device: nil, status: nil))
        logger.info("sip server chat room subject changed", metadata: ["sip.room": "\(uri)", "sip.aor": "\(aor)"])
        notifySubscribers(of: uri)
    }

    /// A REFER to the room from an admin (RFC 4579 §5.5, §5.7): `Refer-To: <AOR>` adds a participant (invited at
    /// once), `Refer-To: <AOR;method=BYE>` removes one. Answered 202 with `Refer-Sub: false` (RFC 4488): the
    /// change is seen in the room's NOTIFYs.
    private func refer(_ request: SIPRequest, room uri: String, flow: ServerFlow, transactionKey: String) {
        guard let room = rooms[uri], let from = request.headers.from else { return }
        let sender = SIPServer.aorKey(from.uri)
        guard room.isAdmin(sender) else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 403, reason: "Not An Admin")
            return
        }
        guard let referTo = request.headers["Refer-To"], let target = try? SIPNameAddress(parsing: referTo) else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 400, reason: "Bad Refer-To")
            return
        }
        let aor = SIPServer.aorKey(target.uri)
        let removing = target.uri.parameters.value(of: "method").map { ASCII.lowercased($0) == "bye" } ?? false
        var changed = room
        let step: RoomStep
        if removing {
            guard room.participant(aor) != nil else {
                respond(request, flow: flow, transactionKey: transactionKey, status: 404, reason: "Not A Participant")
                return
            }
            changed.participants.removeAll { $0.aor == aor }
            step = .participantRemoved
        } else {
            guard room.participant(aor) == nil else {
                respond(
                    request, flow: flow, transactionKey: transactionKey, status: 202,
                    extraHeaders: [("Refer-Sub", "false")])
                return
            }
            guard room.participants.count < Self.roomMaxParticipants else {
                respond(request, flow: flow, transactionKey: transactionKey, status: 403, reason: "Room Is Full")
                return
            }
            changed.participants.append(ChatRoom.Participant(aor: aor, isAdmin: false))
            step = .participantAdded
        }
        do { try database?.saveChatRoom(changed) } catch {
            logger.error("sip server cannot persist a chat room", metadata: ["sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 500, reason: "Room Not Stored")
            return
        }
        rooms[uri] = changed
        respond(
            request, flow: flow, transactionKey: transactionKey, status: 202, extraHeaders: [("Refer-Sub", "false")])
        emit(.room(room: uri, step: step, aor: aor, device: nil, status: nil))
        logger.info(
            "sip server chat room participants changed",
            metadata: ["sip.room": "\(uri)", "sip.aor": "\(aor)", "sip.step": "\(step.rawValue)"])
        if step == .participantAdded { invite(aor, to: uri) }
        notifySubscribers(of: uri)
    }

    // MARK: - state (RFC 4575 over RFC 6665)

    /// A SUBSCRIBE to the room with `Event: conference` from a participant: 200, then a NOTIFY with the full state;
    /// `Expires: 0` ends the subscription (a last NOTIFY, terminated).
    private func subscribe(_ request: SIPRequest, room uri: String, flow: ServerFlow, transactionKey: String) {
        guard let room = rooms[uri], let from = request.headers.from, let callID = request.headers.callID else {
            return
        }
        let event = request.headers["Event"].map { ASCII.lowercased(Self.trimmed($0.prefix { $0 != ";" })) }
        guard event == "conference" else {
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 489,
                extraHeaders: [("Allow-Events", "conference")])
            return
        }
        let subscriber = SIPServer.aorKey(from.uri)
        guard room.participant(subscriber) != nil else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 403, reason: "Not A Participant")
            return
        }
        let asked = request.headers["Expires"].flatMap { Int64(Self.trimmed(Substring($0))) }
        let expires = min(max(0, asked ?? Self.roomSubscriptionDefaultExpires), Self.roomSubscriptionMaxExpires)
        // The room's tag is the To tag of its 200 (the same for a retransmission).
        let answer = ServerResponse.make(
            to: request, over: flow, status: 200, reason: nil, extraHeaders: [], contacts: [], serverHeader: nil)
        let subscriberTag = from.tag ?? ""
        let key = RoomSubscription.key(callID: callID, subscriberTag: subscriberTag)
        let now = SystemClock.unixSeconds()
        var subscription =
            rooms[subscription: key]
            ?? RoomSubscription(
                room: uri, callID: callID, subscriberTag: subscriberTag, roomTag: answer.headers.to?.tag ?? "",
                subscriber: from.uri.description, target: request.headers.contacts.first?.uri ?? from.uri, flow: flow,
                expiresAt: now)
        subscription.flow = flow
        subscription.expiresAt = now + expires
        respond(
            request, flow: flow, transactionKey: transactionKey, status: 200,
            extraHeaders: [("Expires", String(expires))], contacts: [RoomMessages.focusContact(uri)])
        rooms[subscription: key] = expires > 0 ? subscription : nil
        notify(subscription, terminated: expires > 0 ? nil : "timeout")
    }

    /// `text` without its surrounding spaces and tabs.
    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// Sends every live subscriber of the room its full state (a new version).
    private func notifySubscribers(of uri: String) {
        for subscription in rooms.subscriptions(to: uri, now: SystemClock.unixSeconds()) { notify(subscription) }
    }

    /// Sends one NOTIFY with the room's full state and the next version, as a client transaction whose answer
    /// is awaited (not retransmitted: a subscriber that misses one has the next, or refreshes).
    private func notify(_ subscription: RoomSubscription, terminated reason: String? = nil) {
        guard var room = rooms[subscription.room], subscription.flow.isLive else { return }
        room.version += 1
        rooms[subscription.room] = room
        var sent = subscription
        sent.sequence += 1
        if reason == nil { rooms[subscription: subscription.key] = sent }
        let branch = SIPIdentifiers.branch()
        let notify = RoomMessages.notify(
            room.conferenceInfo(version: room.version), in: sent, over: subscription.flow, branch: branch,
            secondsLeft: subscription.expiresAt - SystemClock.unixSeconds(), terminated: reason)
        rooms.notifySent(branch: branch, subscription: subscription.key)
        subscription.flow.send(notify.serialized())
        logger.debug(
            "sip server chat room state notified",
            metadata: ["sip.room": "\(room.uri)", "sip.version": "\(room.version)"])
    }

    /// Drops the subscriptions that expired, each with a last NOTIFY (RFC 6665 §4.2.2: terminated, timeout).
    func sweepRooms() {
        for subscription in rooms.sweep(now: SystemClock.unixSeconds()) {
            notify(subscription, terminated: "timeout")
        }
    }

    /// Loads the stored chat rooms (start).
    func loadRooms() throws(SIPServerError) {
        guard let database else { return }
        for room in try database.chatRooms() { rooms[room.uri] = room }
        if !rooms.rooms.isEmpty {
            logger.info("sip server restored chat rooms", metadata: ["sip.count": "\(rooms.rooms.count)"])
        }
    }

    // MARK: - messages

    /// A participant's MESSAGE to the room: passed on to every other participant as a MESSAGE of its own
    /// (`RoomMessages.fannedOut`: From the room), each held for that participant's devices, sent to the live ones
    /// and pushed to the sleeping ones as a one-to-one MESSAGE is (IMDNs not pushed). The sender hears 202 once
    /// every copy is stored; a non-participant 403.
    private func fanOut(_ request: SIPRequest, room uri: String, flow: ServerFlow, transactionKey: String) {
        guard let room = rooms[uri], let from = request.headers.from else { return }
        let sender = SIPServer.aorKey(from.uri)
        guard room.participant(sender) != nil else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 403, reason: "Not A Participant")
            return
        }
        let isIMDN = APNsMessagePush.isIMDN(contentType: request.headers.contentType, body: request.body)
        let now = SystemClock.unixSeconds()
        for participant in room.participants where participant.aor != sender {
            let aor = participant.aor
            let record: HeldMessage
            let copy: SIPRequest
            let active = registrar.activeBindings(aor: aor)
            do {
                copy = try RoomMessages.fannedOut(
                    request, room: uri, to: aor, callID: SIPIdentifiers.callID(), tag: SIPIdentifiers.tag())
                record = HeldMessage(
                    request: copy, id: try SecureRandom.hex(16), aor: aor, devices: active.map(\.key), now: now,
                    lifetime: configuration.heldMessageLifetime, order: forwarder.nextOrder())
                try forwarder.hold(record)
            } catch {
                logger.error(
                    "sip server cannot hold a chat room message",
                    metadata: ["sip.room": "\(uri)", "sip.aor": "\(aor)", "sip.error": "\(error)"])
                respond(request, flow: flow, transactionKey: transactionKey, status: 500, reason: "Message Not Stored")
                return
            }
            registrar.noteKnown(aor)
            emit(.held(aor: aor, callID: record.callID, id: record.id, devices: record.recipients.map(\.device)))
            for binding in active {
                guard let liveFlow = binding.flow, liveFlow.isLive else { continue }
                transmit(
                    forwarder.send(
                        record, over: liveFlow, to: binding.contact.uri,
                        carrying: .init(heldID: record.id, senderKey: nil, device: binding.key), copies: 1))
            }
            guard !isIMDN else { continue }
            var pushed = Set<String>()
            for binding in active {
                guard let push = binding.push,
                    let plan = pushSender.plan(record: record, request: copy, push: push, instance: binding.instance)
                else { continue }
                if case .send(let job) = plan, !pushed.insert(job.destination).inserted { continue }
                sendPush(plan)
            }
        }
        logger.info(
            "sip server chat room message passed on",
            metadata: [
                "sip.room": "\(uri)", "sip.aor": "\(sender)", "sip.body_size": "\(request.body.count)",
                "sip.participants": "\(room.participants.count - 1)",
            ])
        respond(request, flow: flow, transactionKey: transactionKey, status: 202)
    }
}
