public import NSEJSON

/// A file the content is shown with (`UNNotificationAttachment`), as the extension hands it over: the host checks it
/// again once the extension is done, as iOS validates a remote notification's attachments, and moves it into the
/// device's attachment store.
public struct DeliveredAttachment: Sendable, Equatable {
    public var identifier: String
    /// Where the extension left the file.
    public var path: String
    /// Its type, a UTI (`public.jpeg`).
    public var type: String
    /// Whether the thumbnail is hidden (`UNNotificationAttachmentOptionsThumbnailHiddenKey`).
    public var thumbnailHidden: Bool

    public init(identifier: String, path: String, type: String, thumbnailHidden: Bool = false) {
        self.identifier = identifier
        self.path = path
        self.type = type
        self.thumbnailHidden = thumbnailHidden
    }

    public var json: JSON {
        [
            "identifier": .string(identifier), "path": .string(path), "type": .string(type),
            "thumbnail_hidden": .bool(thumbnailHidden),
        ]
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        identifier = try object.field("identifier")
        path = try object.field("path")
        type = try object.field("type")
        thumbnailHidden = try object.field("thumbnail_hidden") ?? false
    }
}

/// What a communication notification shows (`updating(from:)` with an `INSendMessageIntent` or
/// `INStartCallIntent`): the sender, the conversation and where their avatars are.
public struct DeliveredCommunication: Sendable, Equatable {
    /// `INSendMessageIntent` or `INStartCallIntent`.
    public var intent: String
    public var senderName: String
    public var senderHandle: String?
    /// `emailAddress`, `phoneNumber` or `unknown`.
    public var senderHandleType: String
    /// A file with the sender's avatar image, left by the extension.
    public var avatarPath: String?
    public var groupName: String?
    public var groupAvatarPath: String?
    public var conversationIdentifier: String?
    public var recipientCount: Int64
    public var serviceName: String?

    public init(
        intent: String, senderName: String, senderHandle: String?, senderHandleType: String, avatarPath: String?,
        groupName: String?, groupAvatarPath: String?, conversationIdentifier: String?, recipientCount: Int64,
        serviceName: String?
    ) {
        self.intent = intent
        self.senderName = senderName
        self.senderHandle = senderHandle
        self.senderHandleType = senderHandleType
        self.avatarPath = avatarPath
        self.groupName = groupName
        self.groupAvatarPath = groupAvatarPath
        self.conversationIdentifier = conversationIdentifier
        self.recipientCount = recipientCount
        self.serviceName = serviceName
    }

    public var json: JSON {
        [
            "intent": .string(intent), "sender_name": .string(senderName), "sender_handle": senderHandle.json,
            "sender_handle_type": .string(senderHandleType), "avatar_path": avatarPath.json,
            "group_name": groupName.json, "group_avatar_path": groupAvatarPath.json,
            "conversation_identifier": conversationIdentifier.json, "recipient_count": .int(recipientCount),
            "service_name": serviceName.json,
        ]
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        intent = try object.field("intent")
        senderName = try object.field("sender_name")
        senderHandle = try object.field("sender_handle")
        senderHandleType = try object.field("sender_handle_type") ?? "unknown"
        avatarPath = try object.field("avatar_path")
        groupName = try object.field("group_name")
        groupAvatarPath = try object.field("group_avatar_path")
        conversationIdentifier = try object.field("conversation_identifier")
        recipientCount = try object.field("recipient_count") ?? 0
        serviceName = try object.field("service_name")
    }
}
