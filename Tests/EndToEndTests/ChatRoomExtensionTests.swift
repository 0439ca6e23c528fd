import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// A chat room as the extension lives it (issue #36 §1), with the built binaries: `nse sip-server` and its
/// conference factory, `nse room create` and `nse send --room` for Alice, `nse device register` and `nse run` for
/// Bob's sleeping phone. The GC_MSG push joins the room and shows the invitation with its subject; a message in the
/// room is titled with the subject, the sender as subtitle, threaded by the room.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ChatRoomExtensionTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-room-e2e") }

    func nse(_ arguments: [String], stdin: String? = nil) throws -> TestSupport.Output {
        try TestSupport.nse(arguments, stdin: stdin)
    }

    func run(_ device: String, payload: String) throws -> JSON {
        let output = try nse(["run", "--device", device, "--budget", "10"], stdin: payload)
        #expect(output.status == 0, "\(output.stderr)")
        return try JSON.parse(output.stdout)
    }

    @Test func theInvitationJoinsTheRoomAndItsMessagesCarryItsSubject() throws {
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.2"])
        let proxy = try #require(server.uris["tcp"])
        let bob = root + "/bob"
        #expect(
            try nse(["device", "init", bob, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy]).status == 0)
        // Bob's phone registers with its push parameters and sleeps.
        #expect(try nse(["device", "register", bob]).status == 0)
        let created = try nse([
            "room", "create", "--proxy", proxy, "--from", "sip:alice@example.org", "--subject", "Lunch crew",
            "--participant", "sip:bob@example.org", "--participant", "sip:carol@example.org",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let room = try #require(try JSON.parse(created.stdout)["room"]?.stringValue)
        let user = try #require(room.split(separator: "@").first?.split(separator: ":").last.map(String.init))
        #expect(server.waitFor("invitation_held", ["aor": "sip:bob@example.org"]) != nil)

        // The GC_MSG push, as Flexisip sends it: chat-room-addr is the room's user part.
        let invitation = try run(
            bob,
            payload: #"""
                {"aps":{"alert":{"loc-key":"GC_MSG","loc-args":[""]},"sound":"msg.caf","mutable-content":1,"badge":1},
                 "from-uri":"","display-name":"","call-id":"invite-\#(user)","pn_ttl":2592000,"chat-room-addr":"\#(user)"}
                """#)
        #expect(invitation["outcome"] == "rewritten", "\(invitation["reason"] ?? .null)")
        #expect(invitation["display"]?["title"] == "Lunch crew")
        #expect(invitation["display"]?["body"] == "You have been added to a chat room")
        #expect(invitation["extension"]?["info"]?["room_joined"] == true)
        #expect(invitation["extension"]?["info"]?["participants"]?.intValue ?? 0 >= 2)
        #expect(invitation["notification"]?["aps"]?["thread-id"]?.stringValue == room)
        #expect(server.waitFor("joined", ["aor": "sip:bob@example.org"]) != nil)
        let shown = try JSON.parse(try nse(["device", "show", bob]).stdout)
        #expect(shown["rooms"]?.arrayValue?.first?["subject"] == "Lunch crew", "\(shown["rooms"] ?? .null)")

        // Alice writes in the room; the server passes it on to Bob, From the room.
        let sent = try nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--room", room, "--text", "pizza at noon?",
            "--seal-to", bob, "--display-name", "Alice", "--timeout", "10",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        // The room passes it on as a MESSAGE of its own (its own Call-ID), held for Bob's phone: the push names that.
        let held = try #require(server.waitFor("held", ["aor": "sip:bob@example.org"]))
        let callID = try #require(held["call_id"]?.stringValue)
        #expect(callID != (try JSON.parse(sent.stdout)["call_id"]?.stringValue))
        let message = try run(
            bob,
            payload:
                #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"sound":"msg.caf","mutable-content":1},"call-id":"\#(callID)"}"#
        )
        #expect(message["outcome"] == "rewritten", "\(message["reason"] ?? .null)")
        #expect(message["display"]?["title"] == "Lunch crew")
        #expect(message["display"]?["subtitle"] == "Alice")
        #expect(message["display"]?["body"] == "pizza at noon?")
        #expect(message["notification"]?["aps"]?["thread-id"]?.stringValue == room)
        #expect(message["extension"]?["info"]?["chat_room"]?.stringValue == room)
    }

    @Test func anInvitationThatNeverComesStillShowsTheInvitation() throws {
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push"])
        let proxy = try #require(server.uris["tcp"])
        let dave = root + "/dave"
        #expect(
            try nse(["device", "init", dave, "--sip-account", "sip:dave@example.org", "--sip-proxy", proxy]).status == 0
        )
        let started = Date()
        let output = try nse(
            ["run", "--device", dave, "--budget", "2"],
            stdin:
                #"{"aps":{"alert":{"loc-key":"GC_MSG"},"mutable-content":1},"chat-room-addr":"chatroom-nowhere"}"#)
        #expect(output.status == 0, "\(output.stderr)")
        let result = try JSON.parse(output.stdout)
        #expect(result["outcome"] == "rewritten")
        #expect(result["display"]?["body"] == "You have been added to a chat room")
        #expect(result["extension"]?["info"]?["room_joined"] == false)
        // It waits for the room's INVITE within the budget, not past it.
        #expect(Date().timeIntervalSince(started) < 8)
        withExtendedLifetime(server) {}
    }
}
