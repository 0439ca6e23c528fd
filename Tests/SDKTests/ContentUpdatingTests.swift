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

    /// `updating(from:)` answers a mutable content, a mutable receiver's and an immutable one's alike (extensions
    /// force-cast either; that crashed); the text comes along, the receiver stays as it was.
    @Test func anUpdateIsMutable() throws {
        let mutable = UNMutableNotificationContent()
        mutable.title = "Alice"
        mutable.body = "Lunch?"
        let updated = try mutable.updating(from: intent)
        let cast = try #require(updated as? UNMutableNotificationContent)
        cast.body = "Lunch at 1?"
        #expect(cast.title == "Alice" && cast.body == "Lunch at 1?" && mutable.body == "Lunch?")
        let frozen = try #require(mutable.copy() as? UNNotificationContent)
        #expect(!(frozen is UNMutableNotificationContent))
        let frozenUpdate = try #require(try frozen.updating(from: intent) as? UNMutableNotificationContent)
        frozenUpdate.title = "Bob"
        #expect(frozenUpdate.body == "Lunch?" && frozen.title == "Alice")
    }
}

/// `CGRect.dictionaryRepresentation`, the value Apple documents for the thumbnail clipping option, and back.
@Suite struct ClippingRectTests {
    @Test func aRectangleGoesToItsDictionaryAndBack() throws {
        let clip = CGRect(x: 0, y: 0.25, width: 1, height: 0.5)
        let dictionary = clip.dictionaryRepresentation
        #expect((dictionary["Y"] as? NSNumber)?.doubleValue == 0.25)
        #expect(CGRect(dictionaryRepresentation: dictionary) == clip)
        #expect(CGRect(dictionaryRepresentation: ["X": 1] as NSDictionary) == nil)
        let options: [AnyHashable: Any] = [UNNotificationAttachmentOptionsThumbnailClippingRectKey: dictionary]
        #expect(options.count == 1)
    }
}
