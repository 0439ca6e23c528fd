import Foundation
import Intents
import Testing
import UserNotifications

@Suite struct ContentUpdatingTests {
    private let intent = INSendMessageIntent(
        recipients: nil, outgoingMessageType: .outgoingMessageText, content: "Lunch?", speakableGroupName: nil,
        conversationIdentifier: "c1", serviceName: nil,
        sender: INPerson(
            personHandle: INPersonHandle(value: "alice", type: .unknown), nameComponents: nil, displayName: "Alice",
            image: nil, contactIdentifier: nil, customIdentifier: nil),
        attachments: nil)

    /// `updating(from:)` answers in the receiver's class: a mutable content's update is mutable (extensions
    /// force-cast it; that crashed), an immutable one's is not; the text comes along either way.
    @Test func anUpdateIsOfTheReceiversClass() throws {
        let mutable = UNMutableNotificationContent()
        mutable.title = "Alice"
        mutable.body = "Lunch?"
        let updated = try mutable.updating(from: intent)
        let cast = try #require(updated as? UNMutableNotificationContent)
        cast.body = "Lunch at 1?"
        #expect(cast.title == "Alice" && cast.body == "Lunch at 1?" && mutable.body == "Lunch?")
        let frozen = try #require(mutable.copy() as? UNNotificationContent)
        #expect(!(frozen is UNMutableNotificationContent))
        let frozenUpdate = try frozen.updating(from: intent)
        #expect(!(frozenUpdate is UNMutableNotificationContent) && frozenUpdate.title == "Alice")
    }
}
