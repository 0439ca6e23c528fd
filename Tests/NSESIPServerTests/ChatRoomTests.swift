import Foundation
import Logging
import NSESIP
import Testing

@testable import NSESIPServer

/// Chat rooms on the server (issue #36 §1), with NSESIP's user agents on loopback: the conference factory, the
/// room's invitations (at once, held and pushed GC_MSG, on REGISTER), its state over SUBSCRIBE/NOTIFY, the changes
/// only admins may make, its messages passed on to every other participant From the room, and a restart.
@Suite("Chat rooms", .serialized, .timeLimit(.minutes(2)))
struct ChatRoomTests {
    static let factory = try! SIPURI(parsing: "sip:conference-factory@example.org")
    static func aor(_ name: String) -> SIPURI { try! SIPURI(parsing: "sip:\(name)@example.org") }

    /// An agent that takes calls (the room's INVITEs), with fast timers.
    static func phone() -> SIPUserAgent {
        var configuration = SIPUserAgentConfiguration(
            timers: SIPTimers(t1: .milliseconds(100), t2: .milliseconds(400)), tls: SIPTLSOptions(),
            connectTimeout: .seconds(5))
        configuration.acceptsCalls = true
        return SIPUserAgent(configuration: configuration, logger: quietLogger)
    }

    /// Registers `name` from `agent`, with push parameters (its own token) when `token` is given.
    @discardableResult
    static func register(_ agent: SIPUserAgent, _ name: String, proxy: SIPURI, token: String? = nil) async throws
        -> Int
    {
        let push =
            token.map {
                [
                    SIPParameter("pn-provider", "apns.dev"), SIPParameter("pn-prid", "\($0):remote"),
                    SIPParameter("pn-param", "ABCD1234.org.example.nse.remote"),
                ]
            } ?? []
        return try await agent.register(
            aor: aor(name), password: nil, proxy: proxy, expires: 600, contactURIParameters: push,
            contactHeaderParameters: [SIPParameter("+sip.instance", "\"<urn:uuid:00000000-0000-4000-8000-\(name)>\"")]
        ).statusCode
    }

    static func token(_ digit: Character) -> String { String(repeating: digit, count: 64) }

    static func events(_ server: SIPServer, _ step: RoomStep) async -> [SIPServerEvent] {
        await server.eventLog().filter {
            if case .room(_, step, _, _, _) = $0 { return true }
            return false
        }
    }

    static func waitForEvent(_ server: SIPServer, _ step: RoomStep, aor: String) async throws {
        try await eventually("\(step.rawValue) for \(aor)") {
            await events(server, step).contains {
                if case .room(_, _, aor, _, _) = $0 { return true }
                return false
            }
        }
    }

    /// The next call the agent receives, within 10 s.
    static func nextInvite(_ agent: SIPUserAgent) async throws -> SIPCall {
        try await withTimeout(10, "the room's INVITE") {
            for await call in agent.incomingCalls { return call }
            throw TestError.setup("no INVITE")
        }
    }

    @Test("Three participants: the live one invited at once, the sleeping one pushed GC_MSG and invited on REGISTER")
    func invitations() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let (alice, bob, carol, carolAwake) = (fastUA(), Self.phone(), Self.phone(), Self.phone())
        try await withSIPServer(serverConfiguration([.tcp], push: push), closing: [alice, bob, carolAwake]) {
            server, addresses in
            let proxy = addresses.proxy(.tcp)
            #expect(try await Self.register(bob, "bob", proxy: proxy) == 200)
            #expect(try await Self.register(carol, "carol", proxy: proxy, token: Self.token("c")) == 200)
            await carol.close()  // asleep

            let client = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            let room = try await client.create(
                factory: Self.factory, subject: "Trip to Lyon",
                participants: [Self.aor("bob"), Self.aor("carol"), Self.aor("dave")])
            #expect(room.host == "example.org" && room.user?.hasPrefix("chatroom-") == true)
            #expect(room.user?.count == "chatroom-".count + 16)

            // Bob, live: the INVITE at once, From the room, the room as focus, the subject, the participants.
            let bobCall = try await Self.nextInvite(bob)
            let invite = bobCall.invite
            #expect(invite.headers.from?.uri == room && invite.headers.from?.tag != nil)
            #expect(invite.headers.to?.uri == Self.aor("bob"))
            #expect(invite.headers["Contact"] == "<\(room)>;isfocus")
            #expect(invite.headers["Subject"] == "Trip to Lyon")
            #expect(invite.headers.contentType == "application/resource-lists+xml")
            #expect(invite.headers["Content-Disposition"] == "recipient-list")
            let listed = try SIPResourceList(parsing: invite.body).uris.map(\.description)
            #expect(listed == ["alice", "bob", "carol", "dave"].map { "sip:\($0)@example.org" })
            #expect(await bobCall.answer(contentType: nil, body: []))
            try await Self.waitForEvent(server, .joined, aor: "sip:bob@example.org")

            // Carol, asleep: Flexisip's group chat push, then the held INVITE when she registers.
            let records = try await push.waitForRecords(1)
            #expect(records[0].path == "/3/device/\(Self.token("c"))")
            #expect(records[0].headers["apns-push-type"] == "alert")
            let payload = try #require(
                try JSONSerialization.jsonObject(with: Data(records[0].body.utf8)) as? [String: Any])
            let alert = (payload["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(alert?["loc-key"] as? String == "GC_MSG")
            #expect(payload["chat-room-addr"] as? String == room.user)
            #expect(payload["from-uri"] as? String == room.description)
            let pushedCallID = try #require(payload["call-id"] as? String)
            try await Self.waitForEvent(server, .invitationHeld, aor: "sip:carol@example.org")

            #expect(try await Self.register(carolAwake, "carol", proxy: proxy, token: Self.token("c")) == 200)
            let carolCall = try await Self.nextInvite(carolAwake)
            #expect(carolCall.callID == pushedCallID)
            #expect(carolCall.invite.headers["Subject"] == "Trip to Lyon")
            #expect(await carolCall.answer(contentType: nil, body: []))
            try await Self.waitForEvent(server, .joined, aor: "sip:carol@example.org")

            // Dave never registered: held for his first device; the creator is the first admin.
            try await Self.waitForEvent(server, .invitationHeld, aor: "sip:dave@example.org")
            let rooms = await server.chatRooms()
            #expect(rooms.count == 1 && rooms[0].subject == "Trip to Lyon")
            #expect(rooms[0].participants.map(\.admin) == [true, false, false, false])
            #expect(await Self.events(server, .created).count == 1)
            #expect(await Self.events(server, .declined).isEmpty)
        }
    }

    @Test("A device that declines is not invited again")
    func declined() async throws {
        let (alice, bob, bobAgain) = (fastUA(), Self.phone(), Self.phone())
        try await withSIPServer(serverConfiguration([.tcp]), closing: [alice, bob, bobAgain]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            #expect(try await Self.register(bob, "bob", proxy: proxy) == 200)
            let client = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            _ = try await client.create(factory: Self.factory, subject: "No", participants: [Self.aor("bob")])
            #expect(try await Self.nextInvite(bob).reject(statusCode: 603))
            try await Self.waitForEvent(server, .declined, aor: "sip:bob@example.org")
            await bob.close()
            #expect(try await Self.register(bobAgain, "bob", proxy: proxy) == 200)
            let again = try? await withTimeout(0.8, "a second INVITE") {
                for await _ in bobAgain.incomingCalls { return true }
                return false
            }
            #expect(again != true)
        }
    }

    @Test("The room's state over SUBSCRIBE/NOTIFY; subject and participants changed by admins only")
    func stateAndChanges() async throws {
        let (alice, bob, eve) = (fastUA(), fastUA(), fastUA())
        try await withSIPServer(serverConfiguration([.tcp]), closing: [alice, bob, eve]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let admin = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            let room = try await admin.create(factory: Self.factory, subject: "Trip", participants: [Self.aor("bob")])

            // Bob subscribes for ten minutes: 200, then the full state.
            let callID = SIPIdentifiers.callID()
            var headers = SIPHeaders()
            headers.add("Event", "conference")
            headers.add("Expires", "600")
            let subscribed = try await bob.send(
                SIPOutgoingRequest(
                    method: "SUBSCRIBE", to: room, from: Self.aor("bob"), proxy: proxy, extraHeaders: headers,
                    callID: callID))
            #expect(subscribed.statusCode == 200 && subscribed.headers["Expires"] == "600")
            func nextState() async throws -> SIPConferenceInfo {
                let notify = try #require(await bob.nextNotify(callID: callID, timeout: .seconds(5)))
                #expect(notify.headers["Event"] == "conference")
                #expect(notify.headers.contentType == "application/conference-info+xml")
                #expect(notify.headers.from?.uri == room)
                return try SIPConferenceInfo(parsing: notify.body)
            }
            let first = try await nextState()
            #expect(first.entity == room.description && first.subject == "Trip" && first.state == .full)
            #expect(first.users.map(\.entity) == ["sip:alice@example.org", "sip:bob@example.org"])
            #expect(first.users.map(\.isAdmin) == [true, false])

            // The admin changes the subject: every subscriber is told, with a higher version.
            try await admin.changeSubject(of: room, to: "Trip to Lyon")
            let renamed = try await nextState()
            #expect(renamed.subject == "Trip to Lyon" && renamed.version > first.version)

            // Bob is no admin: 403 for the subject and for participants.
            let member = SIPRoomClient(agent: bob, me: Self.aor("bob"), proxy: proxy)
            await #expect(throws: SIPRoomClient.Refusal(status: 403, reason: "Not An Admin")) {
                try await member.changeSubject(of: room, to: "Mine")
            }
            await #expect(throws: SIPRoomClient.Refusal(status: 403, reason: "Not An Admin")) {
                try await member.add(Self.aor("mallory"), to: room)
            }

            // Added, then removed: each change in a NOTIFY.
            try await admin.add(Self.aor("carol"), to: room)
            #expect(try await nextState().users.map(\.entity).contains("sip:carol@example.org"))
            try await admin.remove(Self.aor("carol"), from: room)
            let after = try await nextState()
            #expect(after.users.map(\.entity) == ["sip:alice@example.org", "sip:bob@example.org"])
            #expect(after.subject == "Trip to Lyon")
            #expect(await Self.events(server, .participantAdded).count == 1)
            #expect(await Self.events(server, .participantRemoved).count == 1)
            #expect(await Self.events(server, .subject).count == 1)

            // A fetch (Expires: 0) by the admin; a stranger may not look; an unknown room is 404.
            #expect(try await admin.state(of: room, timeout: .seconds(5)).subject == "Trip to Lyon")
            let stranger = SIPRoomClient(agent: eve, me: Self.aor("eve"), proxy: proxy)
            await #expect(throws: SIPRoomClient.Refusal(status: 403, reason: "Not A Participant")) {
                _ = try await stranger.state(of: room, timeout: .seconds(2))
            }
            await #expect(throws: SIPRoomClient.Refusal(status: 404, reason: "No Such Chat Room")) {
                _ = try await admin.state(of: Self.aor("chatroom-0000"), timeout: .seconds(2))
            }
        }
    }

    @Test("A room message goes to every other participant, From the room; the sender hears 202, a stranger 403")
    func fanOut() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let (alice, bob, carol, carolAwake, eve) = (fastUA(), fastUA(), fastUA(), fastUA(), fastUA())
        try await withSIPServer(serverConfiguration([.tcp], push: push), closing: [alice, bob, carolAwake, eve]) {
            server, addresses in
            let proxy = addresses.proxy(.tcp)
            let (aliceInbox, bobInbox, carolInbox) = (
                MessageCollector(alice), MessageCollector(bob), MessageCollector(carolAwake)
            )
            #expect(try await Self.register(alice, "alice", proxy: proxy) == 200)
            #expect(try await Self.register(bob, "bob", proxy: proxy) == 200)
            #expect(try await Self.register(carol, "carol", proxy: proxy, token: Self.token("c")) == 200)
            await carol.close()
            let client = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            let room = try await client.create(
                factory: Self.factory, subject: "Trip", participants: [Self.aor("bob"), Self.aor("carol")])
            _ = try await push.waitForRecords(1)  // carol's invitation

            let cpim = Array(
                "From: <sip:alice@example.org>\r\nTo: <\(room)>\r\n\r\nContent-Type: text/plain\r\n\r\nhello".utf8)
            let sent = try await alice.sendMessage(
                to: room, from: Self.aor("alice"), proxy: proxy, contentType: "message/cpim", body: cpim,
                callID: "room-message-1")
            #expect(sent.statusCode == 202)

            let received = try await bobInbox.waitForCount(1)[0]
            #expect(received.from?.uri == room && received.to?.uri == Self.aor("bob"))
            #expect(received.body == cpim && received.contentType == "message/cpim")
            #expect(received.headers["Session-mode"] == "true")
            #expect(received.callID != "room-message-1")

            // Carol sleeps: pushed as a one-to-one MESSAGE is (IM_MSG, its own Call-ID), delivered on REGISTER.
            let records = try await push.waitForRecords(2)
            let payload = try #require(
                try JSONSerialization.jsonObject(with: Data(records[1].body.utf8)) as? [String: Any])
            #expect(((payload["aps"] as? [String: Any])?["alert"] as? [String: Any])?["loc-key"] as? String == "IM_MSG")
            #expect(payload["from-uri"] as? String == room.description)
            #expect(payload["chat-room-addr"] as? String == "")
            #expect(try await Self.register(carolAwake, "carol", proxy: proxy, token: Self.token("c")) == 200)
            let carols = try await carolInbox.waitForCount(1)
            #expect(carols[0].callID == payload["call-id"] as? String && carols[0].body == cpim)

            // The sender gets no copy; a stranger is refused, and nothing is held for it.
            let stranger = try await eve.sendMessage(
                to: room, from: Self.aor("eve"), proxy: proxy, contentType: "text/plain", body: Array("x".utf8))
            #expect(stranger.statusCode == 403)
            try await Task.sleep(for: .milliseconds(300))
            #expect(aliceInbox.messages.isEmpty)
            #expect(bobInbox.messages.count == 1)
            #expect(await server.undeliveredCallIDs(aor: "sip:alice@example.org").isEmpty)
        }
    }

    @Test("Over UDP: the invitation answered and acknowledged, the state notified, a message passed on")
    func overUDP() async throws {
        let (alice, bob) = (fastUA(), Self.phone())
        try await withSIPServer(serverConfiguration([.udp]), closing: [alice, bob]) { server, addresses in
            let proxy = addresses.proxy(.udp)
            let inbox = MessageCollector(bob)
            #expect(try await Self.register(bob, "bob", proxy: proxy) == 200)
            let client = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            let room = try await client.create(factory: Self.factory, subject: "UDP", participants: [Self.aor("bob")])
            let call = try await Self.nextInvite(bob)
            #expect(call.invite.headers["Subject"] == "UDP")
            #expect(await call.answer(contentType: nil, body: []))
            // The ACK reaches the phone: its call is confirmed (it stops retransmitting its 200).
            let confirmed = try await withTimeout(5, "the ACK") {
                for await event in call.events where event == .confirmed { return true }
                return false
            }
            #expect(confirmed)
            try await Self.waitForEvent(server, .joined, aor: "sip:bob@example.org")
            #expect(try await client.state(of: room, timeout: .seconds(5)).users.count == 2)
            let sent = try await alice.sendMessage(
                to: room, from: Self.aor("alice"), proxy: proxy, contentType: "text/plain", body: Array("hi".utf8))
            #expect(sent.statusCode == 202)
            #expect(try await inbox.waitForCount(1)[0].from?.uri == room)
        }
    }

    @Test("A subscription ends at its expiry with a last NOTIFY")
    func subscriptionExpiry() async throws {
        let (alice, bob) = (fastUA(), fastUA())
        try await withSIPServer(serverConfiguration([.tcp]), closing: [alice, bob]) { _, addresses in
            let proxy = addresses.proxy(.tcp)
            let client = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            let room = try await client.create(factory: Self.factory, subject: "Short", participants: [Self.aor("bob")])
            let callID = SIPIdentifiers.callID()
            var headers = SIPHeaders()
            headers.add("Event", "conference")
            headers.add("Expires", "1")
            let answer = try await bob.send(
                SIPOutgoingRequest(
                    method: "SUBSCRIBE", to: room, from: Self.aor("bob"), proxy: proxy, extraHeaders: headers,
                    callID: callID))
            #expect(answer.statusCode == 200)
            let first = try #require(await bob.nextNotify(callID: callID, timeout: .seconds(5)))
            #expect(first.headers["Subscription-State"]?.hasPrefix("active;expires=") == true)
            let last = try #require(await bob.nextNotify(callID: callID, timeout: .seconds(5)))
            #expect(last.headers["Subscription-State"] == "terminated;reason=timeout")
            // Another event package is not served.
            var other = SIPHeaders()
            other.add("Event", "presence")
            let refused = try await bob.send(
                SIPOutgoingRequest(
                    method: "SUBSCRIBE", to: room, from: Self.aor("bob"), proxy: proxy, extraHeaders: other))
            #expect(refused.statusCode == 489)
        }
    }

    @Test func aVersion2DatabaseKeepsItsMessagesAndGainsRooms() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        try FileManager.default.createDirectory(atPath: dir.file("db"), withIntermediateDirectories: true)
        let made = try runPython(
            """
            import sqlite3,sys
            c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.executescript(sys.argv[3])
            c.execute("INSERT INTO held_message (id, aor, call_id, headers, body, received_at, expires_at, arrival) VALUES ('v2', 'sip:bob@example.org', 'old-call', '[]', x'6869', 1, 9999999999, 1)")
            c.execute('PRAGMA user_version = 2'); c.commit()
            """, [dir.file("db/sip-server.db"), ServerDatabase.schema[0], ServerDatabase.schema[1]])
        #expect(made)
        let database = try ServerDatabase(directory: dir.file("db"))
        #expect(try database.heldMessages().map(\.callID) == ["old-call"])
        #expect(try database.chatRooms().isEmpty)
        var room = ChatRoom(
            uri: "sip:chatroom-00@example.org", subject: "Kept",
            participants: [
                .init(aor: "sip:alice@example.org", isAdmin: true), .init(aor: "sip:bob@example.org", isAdmin: false),
            ], createdAt: 1, version: 4)
        room.set(.joined, aor: "sip:bob@example.org", device: "instance:b")
        room.set(.declined(status: 603), aor: "sip:alice@example.org", device: "instance:a")
        room.set(.held, aor: "sip:bob@example.org", device: "instance:asleep")
        try database.saveChatRoom(room)
        let read = try #require(try ServerDatabase(directory: dir.file("db")).chatRooms().first)
        #expect(read.subject == "Kept" && read.version == 4 && read.participants.map(\.isAdmin) == [true, false])
        // Final answers are kept; a device waiting for its REGISTER is not (it is invited again when it comes).
        #expect(read.participant("sip:bob@example.org")?.devices == ["instance:b": .joined])
        #expect(read.participant("sip:alice@example.org")?.devices == ["instance:a": .declined(status: 603)])
    }

    @Test("Rooms, subjects, participants and answers survive a restart with a database")
    func restart() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var configuration = serverConfiguration([.tcp])
        configuration.databaseDirectory = dir.file("db")
        let (alice, bob) = (fastUA(), Self.phone())
        let room = try await withSIPServer(configuration, closing: [alice, bob]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            #expect(try await Self.register(bob, "bob", proxy: proxy) == 200)
            let client = SIPRoomClient(agent: alice, me: Self.aor("alice"), proxy: proxy)
            let room = try await client.create(factory: Self.factory, subject: "Trip", participants: [Self.aor("bob")])
            #expect(try await Self.nextInvite(bob).answer(contentType: nil, body: []))
            try await Self.waitForEvent(server, .joined, aor: "sip:bob@example.org")
            try await client.changeSubject(of: room, to: "Trip to Lyon")
            try await client.add(Self.aor("carol"), to: room)
            return room
        }
        let (alice2, bob2) = (fastUA(), Self.phone())
        try await withSIPServer(configuration, closing: [alice2, bob2]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let rooms = await server.chatRooms()
            #expect(rooms.map(\.uri) == [room.description] && rooms.first?.subject == "Trip to Lyon")
            #expect(rooms.first?.participants.map(\.aor) == ["alice", "bob", "carol"].map { "sip:\($0)@example.org" })
            let client = SIPRoomClient(agent: alice2, me: Self.aor("alice"), proxy: proxy)
            let state = try await client.state(of: room, timeout: .seconds(5))
            #expect(state.subject == "Trip to Lyon" && state.users.count == 3)
            // Bob's device joined before the restart: it is not invited again.
            #expect(try await Self.register(bob2, "bob", proxy: proxy) == 200)
            let again = try? await withTimeout(0.8, "a second INVITE") {
                for await _ in bob2.incomingCalls { return true }
                return false
            }
            #expect(again != true)
        }
    }
}
