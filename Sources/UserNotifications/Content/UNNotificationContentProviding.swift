public import Foundation

/// What `UNNotificationContent.updating(from:)` takes (iOS 15): Apple's `INSendMessageIntent` and
/// `INStartCallIntent` conform (nse's Intents module says so).
public protocol UNNotificationContentProviding: NSObjectProtocol {}

/// The sender and conversation a communication notification shows, as the Intents module reads them from an
/// intent. A package-level seam: users see only `UNNotificationContentProviding`.
package protocol CommunicationContextProviding {
    /// The context, or nil when the intent cannot make one (an incoming message without a sender).
    var communicationContext: CommunicationContext? { get }
}

/// What iOS shows of a communication notification, and what nse's result records of it (`communication`).
package struct CommunicationContext: Sendable, Equatable {
    /// `INSendMessageIntent` or `INStartCallIntent`.
    package var intent: String
    package var senderName: String
    package var senderHandle: String?
    /// `emailAddress`, `phoneNumber` or `unknown`.
    package var senderHandleType: String
    /// The sender's avatar image, as bytes (from `INImage(imageData:)` or a file it names).
    package var avatar: Data?
    /// The group's name (`speakableGroupName`), for a conversation of more than two.
    package var groupName: String?
    /// The group's avatar (`setImage(_:forParameterNamed: \.speakableGroupName)`).
    package var groupAvatar: Data?
    package var conversationIdentifier: String?
    package var recipientCount: Int
    package var serviceName: String?

    package init(
        intent: String, senderName: String, senderHandle: String?, senderHandleType: String, avatar: Data?,
        groupName: String?, groupAvatar: Data?, conversationIdentifier: String?, recipientCount: Int,
        serviceName: String?
    ) {
        self.intent = intent
        self.senderName = senderName
        self.senderHandle = senderHandle
        self.senderHandleType = senderHandleType
        self.avatar = avatar
        self.groupName = groupName
        self.groupAvatar = groupAvatar
        self.conversationIdentifier = conversationIdentifier
        self.recipientCount = recipientCount
        self.serviceName = serviceName
    }
}
