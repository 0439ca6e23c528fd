import Foundation
import Testing
import UserNotifications

@testable import NotificationServiceExtension

/// The extension's own logic, run as a unit test: Apple's types are constructed as the system would.
@Suite struct NotificationServiceTests {
    func request(_ userInfo: [AnyHashable: Any], title: String = "New message") -> UNNotificationRequest {
        let content = UNMutableNotificationContent()
        content.title = title
        content.body = "Lunch at 1?"
        content.userInfo = userInfo
        return UNNotificationRequest(identifier: UUID().uuidString, content: content, trigger: nil)
    }

    @Test func chatPushReadsTheSenderAndRoom() {
        let push = ChatPush(userInfo: ["from": "sip:alice@example.org", "room": "lunch", "room-name": "Lunch"])
        #expect(push?.sender == "alice@example.org")
        #expect(push?.room == "lunch")
        #expect(push?.roomName == "Lunch")
        #expect(ChatPush(userInfo: ["from": "mailto:alice@example.org"]) == nil)
        #expect(ChatPush(userInfo: [:]) == nil)
    }

    @Test func rewritesTheNotificationAndCountsUnread() async {
        let suite = UserDefaults(suiteName: NotificationService.appGroup)!
        suite.removeObject(forKey: "unread")
        let delivered = await withCheckedContinuation { continuation in
            NotificationService().didReceive(
                request(["from": "sip:alice@example.org", "name": "Alice", "room-name": "Lunch"])
            ) { continuation.resume(returning: $0) }
        }
        #expect(delivered.title == "Alice")
        #expect(delivered.subtitle == "Lunch")
        #expect(delivered.body == "Lunch at 1?")
        #expect(delivered.threadIdentifier == "sip:alice@example.org")
        #expect(delivered.badge == 1)
        let second = await withCheckedContinuation { continuation in
            NotificationService().didReceive(request(["from": "sip:bob@example.org"])) {
                continuation.resume(returning: $0)
            }
        }
        #expect(second.title == "bob@example.org")
        #expect(second.badge == 2)
    }

    @Test func leavesOtherPushesAsTheyCame() async {
        let delivered = await withCheckedContinuation { continuation in
            NotificationService().didReceive(request(["kind": "system"], title: "Update")) {
                continuation.resume(returning: $0)
            }
        }
        #expect(delivered.title == "Update")
        #expect(delivered.badge == nil)
    }

    @Test func theRequestsContentCannotBeChangedThroughACopy() {
        let original = request(["from": "sip:alice@example.org"])
        let copy = original.content.mutableCopy() as! UNMutableNotificationContent
        copy.title = "changed"
        #expect(original.content.title == "New message")
        #expect(!(original.content is UNMutableNotificationContent))
    }
}
