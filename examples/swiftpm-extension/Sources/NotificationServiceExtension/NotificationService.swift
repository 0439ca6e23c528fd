import Foundation
import Intents
import UserNotifications

#if canImport(NSEOSLog)
    import NSEOSLog  // nse's os.log for a SwiftPM target: the one line that differs from the iOS target
#else
    import os
#endif

/// A chat app's extension: the sender and room from the payload as a communication notification, the room's unread
/// count from the App Group as the badge, and the best attempt when time runs out.
class NotificationService: UNNotificationServiceExtension {
    static let appGroup = "group.org.example.app"
    private let log = Logger(subsystem: "org.example.app.notification-service", category: "push")
    var contentHandler: ((UNNotificationContent) -> Void)?
    var bestAttemptContent: UNMutableNotificationContent?

    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        self.contentHandler = contentHandler
        guard let content = request.content.mutableCopy() as? UNMutableNotificationContent else {
            contentHandler(request.content)
            return
        }
        bestAttemptContent = content
        guard let message = ChatPush(userInfo: content.userInfo) else {
            log.notice("push \(request.identifier, privacy: .public) is not a chat message")
            contentHandler(content)
            return
        }
        log.notice("push \(request.identifier, privacy: .public) from \(message.sender)")
        content.title = message.sender
        content.threadIdentifier = message.room
        if let room = message.roomName { content.subtitle = room }
        if let defaults = UserDefaults(suiteName: Self.appGroup) {
            let unread = defaults.integer(forKey: "unread") + 1
            defaults.set(unread, forKey: "unread")
            content.badge = NSNumber(value: unread)
        }
        let sender = INPerson(
            personHandle: INPersonHandle(value: message.senderAddress, type: .unknown), nameComponents: nil,
            displayName: message.sender, image: nil, contactIdentifier: nil, customIdentifier: message.senderAddress)
        let intent = INSendMessageIntent(
            recipients: nil, outgoingMessageType: .outgoingMessageText, content: nil,
            speakableGroupName: message.roomName.map { INSpeakableString(spokenPhrase: $0) },
            conversationIdentifier: message.room, serviceName: nil, sender: sender, attachments: nil)
        // Apple's sequence for a communication notification: donate the interaction, then update the content.
        let interaction = INInteraction(intent: intent, response: nil)
        interaction.direction = .incoming
        interaction.donate(completion: nil)
        do {
            contentHandler(try content.updating(from: intent))
        } catch {
            log.error("push \(request.identifier, privacy: .public): \(error.localizedDescription, privacy: .public)")
            contentHandler(content)
        }
    }

    override func serviceExtensionTimeWillExpire() {
        if let contentHandler = contentHandler, let bestAttemptContent = bestAttemptContent {
            contentHandler(bestAttemptContent)
        }
    }
}

/// What the app's server puts beside `aps`: `{"from":"sip:alice@example.org","name":"Alice","room":"…"}`.
struct ChatPush: Equatable {
    var senderAddress: String
    var sender: String
    var room: String
    var roomName: String?

    init?(userInfo: [AnyHashable: Any]) {
        guard let from = userInfo["from"] as? String, from.hasPrefix("sip:") || from.hasPrefix("sips:") else {
            return nil
        }
        senderAddress = from
        sender = (userInfo["name"] as? String) ?? String(from.drop { $0 != ":" }.dropFirst())
        room = (userInfo["room"] as? String) ?? from
        roomName = userInfo["room-name"] as? String
    }
}
