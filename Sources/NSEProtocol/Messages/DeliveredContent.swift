public import NSEJSON

/// Content handed to `contentHandler`: an APNs-shaped dictionary (`aps` plus the user-info keys).
public struct DeliveredContent: Sendable, Equatable {
    public var content: JSONObject
    /// The extension says this is its fallback rather than a rewrite.
    public var isFallback: Bool
    /// Why, in a few words (machine-readable prefix first, e.g. `envelope-wrong-key: …`).
    public var reason: String?
    /// Diagnostics the host copies into the result (`extension.info`).
    public var info: JSONObject?
    /// The files shown with it (`UNNotificationAttachment`), in order.
    public var attachments: [DeliveredAttachment]
    /// A communication notification's sender and conversation (`updating(from:)`).
    public var communication: DeliveredCommunication?

    public init(
        content: JSONObject, isFallback: Bool = false, reason: String? = nil, info: JSONObject? = nil,
        attachments: [DeliveredAttachment] = [], communication: DeliveredCommunication? = nil
    ) {
        self.content = content
        self.isFallback = isFallback
        self.reason = reason
        self.info = info
        self.attachments = attachments
        self.communication = communication
    }
}
