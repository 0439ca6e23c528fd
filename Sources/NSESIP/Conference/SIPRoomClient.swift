/// What a liblinphone client does with a server group chat room (RFC 4579 through a conference factory), over a
/// ``SIPUserAgent``: create one, change its subject, add or remove participants, read its state.
///
/// Every request goes through `proxy` from `me`; a room is addressed by its URI (the Contact, less `isfocus`, of the
/// factory's 200).
public struct SIPRoomClient: Sendable {
    /// A room request that was answered with something else than success.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var status: Int
        public var reason: String

        /// Creates a refusal: the final status and its reason phrase.
        public init(status: Int, reason: String) {
            self.status = status
            self.reason = reason
        }

        public var description: String { "\(status) \(reason)" }
    }

    let agent: SIPUserAgent
    let me: SIPURI
    let proxy: SIPURI
    let password: String?

    /// A client acting as `me` (an address of record) through `proxy`, answering digest challenges with `password`.
    public init(agent: SIPUserAgent, me: SIPURI, proxy: SIPURI, password: String? = nil) {
        self.agent = agent
        self.me = me
        self.proxy = proxy
        self.password = password
    }

    /// Creates a room: an INVITE to `factory` with the `Subject` and the participants as a resource list
    /// (`Content-Disposition: recipient-list`, RFC 5366); returns the room's URI, from the 200's Contact.
    public func create(factory: SIPURI, subject: String, participants: [SIPURI]) async throws -> SIPURI {
        var headers = SIPHeaders()
        headers.add("Subject", subject)
        headers.add("Content-Disposition", SIPResourceList.disposition)
        let call = try await agent.call(
            SIPOutgoingCall(
                to: factory, from: me, proxy: proxy, contentType: SIPResourceList.contentType,
                body: SIPResourceList(uris: participants).serialized(), extraHeaders: headers, password: password))
        let answer = try await Self.final(call)
        guard let contact = answer.headers.contacts.first?.uri, contact.user != nil else {
            throw SIPError(.unexpectedResponse, "the factory's 200 names no room in its Contact")
        }
        var room = contact
        room.parameters = []
        return room
    }

    /// Changes the room's subject: an INVITE to the room carrying the new `Subject` (admins only: 403 otherwise).
    public func changeSubject(of room: SIPURI, to subject: String) async throws {
        var headers = SIPHeaders()
        headers.add("Subject", subject)
        let call = try await agent.call(
            SIPOutgoingCall(
                to: room, from: me, proxy: proxy, contentType: nil, body: [], extraHeaders: headers,
                password: password))
        _ = try await Self.final(call)
    }

    /// Adds a participant: a REFER to the room with `Refer-To: <aor>` (RFC 4579 §5.5; admins only).
    public func add(_ participant: SIPURI, to room: SIPURI) async throws {
        try await refer(room, to: "<\(participant)>")
    }

    /// Removes a participant: a REFER to the room with `Refer-To: <aor;method=BYE>` (RFC 4579 §5.7; admins only).
    public func remove(_ participant: SIPURI, from room: SIPURI) async throws {
        var target = participant
        target.parameters = [SIPParameter("method", "BYE")]
        try await refer(room, to: "<\(target)>")
    }

    /// The room's state: a SUBSCRIBE with `Event: conference` and `Expires: 0` (a fetch, RFC 6665 §4.4.3): the
    /// 200, then one NOTIFY with the full conference-info, waited for up to `timeout`.
    public func state(of room: SIPURI, timeout: Duration) async throws -> SIPConferenceInfo {
        let callID = SIPIdentifiers.callID()
        var headers = SIPHeaders()
        headers.add("Event", "conference")
        headers.add("Expires", "0")
        headers.add("Accept", SIPConferenceInfo.contentType)
        let response = try await agent.send(
            SIPOutgoingRequest(
                method: "SUBSCRIBE", to: room, from: me, proxy: proxy, extraHeaders: headers, callID: callID,
                password: password))
        guard (200..<300).contains(response.statusCode) else {
            throw Refusal(status: response.statusCode, reason: response.reasonPhrase)
        }
        guard let notify = await agent.nextNotify(callID: callID, timeout: timeout) else {
            throw SIPError(.timeout, "no NOTIFY from the room")
        }
        return try SIPConferenceInfo(parsing: notify.body)
    }

    private func refer(_ room: SIPURI, to target: String) async throws {
        var headers = SIPHeaders()
        headers.add("Refer-To", target)
        headers.add("Refer-Sub", "false")
        let response = try await agent.send(
            SIPOutgoingRequest(
                method: "REFER", to: room, from: me, proxy: proxy, extraHeaders: headers, password: password))
        guard (200..<300).contains(response.statusCode) else {
            throw Refusal(status: response.statusCode, reason: response.reasonPhrase)
        }
    }

    /// The INVITE's final answer: its 2xx, or the refusal thrown.
    private static func final(_ call: SIPCall) async throws -> SIPResponse {
        for await event in call.events {
            switch event {
            case .answered(let response): return response
            case .refused(let response): throw Refusal(status: response.statusCode, reason: response.reasonPhrase)
            case .failed(let error): throw error
            case .progress, .confirmed, .cancelled, .remoteHangUp: continue
            }
        }
        throw SIPError(.closed, "the INVITE ended without an answer")
    }
}
