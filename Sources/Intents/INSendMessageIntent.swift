public import Foundation
import UserNotifications

/// What kind of message is sent.
public enum INOutgoingMessageType: Int, Sendable {
    case unknown = 0
    case outgoingMessageText = 1
    case outgoingMessageAudio = 2
}

/// A file an intent carries.
open class INFile: NSObject, NSCopying {
    open var data: Data { _data ?? (fileURL.flatMap { try? Data(contentsOf: $0) } ?? Data()) }
    open var filename: String
    open var typeIdentifier: String?
    open var fileURL: URL? { _fileURL }

    private let _data: Data?
    private let _fileURL: URL?

    public init(data: Data, filename: String, typeIdentifier: String?) {
        _data = data
        _fileURL = nil
        self.filename = filename
        self.typeIdentifier = typeIdentifier
        super.init()
    }

    public init(fileURL: URL, filename: String?, typeIdentifier: String?) {
        _data = nil
        _fileURL = fileURL
        self.filename = filename ?? fileURL.lastPathComponent
        self.typeIdentifier = typeIdentifier
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// An attachment of a message intent (iOS 14): an audio message.
open class INSendMessageAttachment: NSObject {
    open var audioMessageFile: INFile? { _audioMessageFile }
    private let _audioMessageFile: INFile?

    init(audioMessageFile: INFile?) {
        _audioMessageFile = audioMessageFile
        super.init()
    }

    open class func attachment(withAudioMessageFile audioMessageFile: INFile) -> INSendMessageAttachment {
        INSendMessageAttachment(audioMessageFile: audioMessageFile)
    }
}

/// A message from a sender, to the user and others: what a communication notification is made from.
open class INSendMessageIntent: INIntent, UNNotificationContentProviding {
    open var recipients: [INPerson]? { _recipients }
    open var outgoingMessageType: INOutgoingMessageType { _outgoingMessageType }
    open var content: String? { _content }
    open var speakableGroupName: INSpeakableString? { _speakableGroupName }
    open var conversationIdentifier: String? { _conversationIdentifier }
    open var serviceName: String? { _serviceName }
    open var sender: INPerson? { _sender }
    open var attachments: [INSendMessageAttachment]? { _attachments }

    private let _recipients: [INPerson]?
    private let _outgoingMessageType: INOutgoingMessageType
    private let _content: String?
    private let _speakableGroupName: INSpeakableString?
    private let _conversationIdentifier: String?
    private let _serviceName: String?
    private let _sender: INPerson?
    private let _attachments: [INSendMessageAttachment]?

    /// iOS 14: the designated initializer.
    public init(
        recipients: [INPerson]?, outgoingMessageType: INOutgoingMessageType, content: String?,
        speakableGroupName: INSpeakableString?, conversationIdentifier: String?, serviceName: String?,
        sender: INPerson?, attachments: [INSendMessageAttachment]?
    ) {
        _recipients = recipients
        _outgoingMessageType = outgoingMessageType
        _content = content
        _speakableGroupName = speakableGroupName
        _conversationIdentifier = conversationIdentifier
        _serviceName = serviceName
        _sender = sender
        _attachments = attachments
        super.init()
    }

    /// iOS 11 to 14, still in older code.
    @available(*, deprecated, message: "Use the initializer with outgoingMessageType and attachments")
    public convenience init(
        recipients: [INPerson]?, content: String?, speakableGroupName: INSpeakableString?,
        conversationIdentifier: String?, serviceName: String?, sender: INPerson?
    ) {
        self.init(
            recipients: recipients, outgoingMessageType: .outgoingMessageText, content: content,
            speakableGroupName: speakableGroupName, conversationIdentifier: conversationIdentifier,
            serviceName: serviceName, sender: sender, attachments: nil)
    }

    override class func parameterName(_ keyPath: AnyKeyPath) -> String? {
        switch keyPath {
        case \INSendMessageIntent.speakableGroupName: "speakableGroupName"
        case \INSendMessageIntent.sender: "sender"
        case \INSendMessageIntent.recipients: "recipients"
        case \INSendMessageIntent.content: "content"
        case \INSendMessageIntent.conversationIdentifier: "conversationIdentifier"
        case \INSendMessageIntent.serviceName: "serviceName"
        default: nil
        }
    }

    /// The group's image before any other as the key image, as iOS shows a group's avatar.
    open override func keyImage() -> INImage? { images["speakableGroupName"] ?? sender?.image }
}

extension INSendMessageIntent: CommunicationContextProviding {
    /// An incoming message needs its sender; without one iOS has nothing to show (`contentProvidingInvalid`).
    package var communicationContext: CommunicationContext? {
        guard let sender else { return nil }
        let handleType: String
        switch sender.personHandle?.type {
        case .emailAddress?: handleType = "emailAddress"
        case .phoneNumber?: handleType = "phoneNumber"
        default: handleType = "unknown"
        }
        return CommunicationContext(
            intent: "INSendMessageIntent", senderName: sender.displayName, senderHandle: sender.personHandle?.value,
            senderHandleType: handleType, avatar: sender.image?.bytes, groupName: speakableGroupName?.spokenPhrase,
            groupAvatar: images["speakableGroupName"]?.bytes, conversationIdentifier: conversationIdentifier,
            recipientCount: recipients?.count ?? 0, serviceName: serviceName)
    }
}
