import Foundation
import NSEDevice
import NSEExtension
import NSEJSON
import NSEPayload
import NSEProtocol
import NSETestSupport
import Testing

/// The chat rooms an app joined (App Group store, `rooms`), and how a message in one is titled.
@Suite struct RoomStoreTests {
    @Test func aRoomIsKeptUnderItsAddressHoweverAMessageWritesIt() throws {
        let rooms = try AppGroupStore(containerDirectory: try TestSupport.temporaryDirectory()).rooms
        try rooms.keep(
            address: "sip:chatroom-ab12@Example.org", subject: "Lunch", participants: ["sip:alice@example.org"],
            now: 1000)
        // The invitation's chat-room-addr and a fanned-out message's From name the same room.
        let found = try #require(try rooms.room("<SIP:chatroom-ab12@example.org;gr=x>"))
        #expect(found.subject == "Lunch" && found.participants == ["sip:alice@example.org"])
        #expect(found.joinedAt == 1000)
        // Surrounding spaces and tabs go; a name-addr's display name does not matter; an address of spaces is none.
        #expect(RoomStore.key(" \t\"Lunch\" <sip:chatroom-ab12@EXAMPLE.org> \t") == "sip:chatroom-ab12@example.org")
        #expect(RoomStore.key(" \t ") == "")
        #expect(RoomStore.key("x") == "x")
        // The user part is case-sensitive: another room.
        #expect(try rooms.room("sip:ChatRoom-ab12@example.org") == nil)
        // Its state again later: the subject and participants change, when it was joined does not.
        try rooms.keep(
            address: "sip:chatroom-ab12@example.org", subject: "Dinner",
            participants: ["sip:alice@example.org", "sip:bob@example.org"], now: 2000)
        let updated = try #require(try rooms.room("sip:chatroom-ab12@example.org"))
        #expect(updated.subject == "Dinner" && updated.participants.count == 2)
        #expect(updated.joinedAt == 1000 && updated.updatedAt == 2000)
        #expect(try rooms.all().map(\.address) == ["sip:chatroom-ab12@example.org"])
    }

    @Test func aMessageInARoomIsTitledWithItsSubjectAndThreadedByIt() throws {
        let payload = Payload(root: ["aps": ["alert": ["loc-key": "IM_MSG"], "mutable-content": 1]])
        let rewriter = Rewriter(payload: payload, strings: .linphoneDefaults)
        let plaintext = try Plaintext([
            "type": "message", "from": "sip:alice@example.org", "display_name": "Alice", "text": "hi all",
        ])
        guard case .message(let message) = plaintext else {
            Issue.record("not a message")
            return
        }
        let room = "sip:chatroom-ab12@example.org"
        let titled = rewriter.inRoom(rewriter.rewrite(message, source: "sip"), address: room, subject: "Lunch")
        let alert = try #require(titled.content["aps"]?["alert"])
        #expect(alert["title"] == "Lunch" && alert["subtitle"] == "Alice" && alert["body"] == "hi all")
        #expect(titled.content["aps"]?["thread-id"]?.stringValue == room)
        #expect(titled.content["chat_room"]?.stringValue == room)
        // A room without a subject keeps the sender as the title.
        let untitled = rewriter.inRoom(rewriter.rewrite(message, source: "sip"), address: room, subject: "")
        #expect(untitled.content["aps"]?["alert"]?["title"] == "Alice")
        #expect(untitled.content["aps"]?["alert"]?["subtitle"] == nil)
    }
}
