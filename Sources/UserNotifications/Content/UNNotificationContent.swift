public import Foundation

/// A notification's content: what the lock screen shows, and the push's user info. The request's content is
/// immutable; `mutableCopy() as? UNMutableNotificationContent` gives one to change, as the Xcode template does.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying {
    var storage: Storage

    /// Every field of a content, copied whole between the immutable and the mutable class.
    struct Storage {
        var title = ""
        var subtitle = ""
        var body = ""
        var badge: NSNumber?
        var sound: UNNotificationSound?
        var userInfo: [AnyHashable: Any] = [:]
        var attachments: [UNNotificationAttachment] = []
        var launchImageName = ""
        var threadIdentifier = ""
        var categoryIdentifier = ""
        var targetContentIdentifier: String?
        var summaryArgument = ""
        var summaryArgumentCount = 1
        var interruptionLevel = UNNotificationInterruptionLevel.active
        var relevanceScore = 0.0
        var filterCriteria: String?
        /// Set by ``updating(from:)``: the sender and conversation of a communication notification.
        var communication: CommunicationContext?
    }

    public override init() {
        storage = Storage()
        super.init()
    }

    init(storage: Storage) {
        self.storage = storage
        super.init()
    }

    open var title: String { storage.title }
    open var subtitle: String { storage.subtitle }
    open var body: String { storage.body }
    open var badge: NSNumber? { storage.badge }
    open var sound: UNNotificationSound? { storage.sound }
    open var userInfo: [AnyHashable: Any] { storage.userInfo }
    open var attachments: [UNNotificationAttachment] { storage.attachments }
    open var launchImageName: String { storage.launchImageName }
    open var threadIdentifier: String { storage.threadIdentifier }
    open var categoryIdentifier: String { storage.categoryIdentifier }
    /// iOS 13.
    open var targetContentIdentifier: String? { storage.targetContentIdentifier }
    /// iOS 12; ignored since iOS 15, as Apple says.
    open var summaryArgument: String { storage.summaryArgument }
    /// iOS 12; ignored since iOS 15, as Apple says.
    open var summaryArgumentCount: Int { storage.summaryArgumentCount }
    /// iOS 15.
    open var interruptionLevel: UNNotificationInterruptionLevel { storage.interruptionLevel }
    /// iOS 15; from 0 to 1.
    open var relevanceScore: Double { storage.relevanceScore }
    /// iOS 16.
    open var filterCriteria: String? { storage.filterCriteria }

    open func copy(with zone: NSZone? = nil) -> Any { UNNotificationContent(storage: storage) }

    open func mutableCopy(with zone: NSZone? = nil) -> Any { UNMutableNotificationContent(storage: storage) }

    /// A communication notification's content (iOS 15): this content with the sender and conversation of
    /// `provider`, an `INSendMessageIntent` or `INStartCallIntent`; the lock screen then shows the sender's name and
    /// avatar. As on iOS, an app without the communication-notifications entitlement gets its content back all the
    /// same and the notification is shown as an ordinary one (the host decides; the result says so).
    ///
    /// Throws ``UNError/Code/contentProvidingObjectNotAllowed`` (1500) for an object that is not one of Apple's
    /// intents (Apple: "The system allows only objects in the Apple SDK"), and ``UNError/Code/contentProvidingInvalid``
    /// (1501) for an incoming message intent without a sender: nse's reading of two codes Apple does not document.
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        guard let source = provider as? any CommunicationContextProviding else {
            throw UNError(.contentProvidingObjectNotAllowed)
        }
        guard let context = source.communicationContext else { throw UNError(.contentProvidingInvalid) }
        var updated = storage
        updated.communication = context
        // A mutable content whatever the receiver: shipping extensions force-cast the update to
        // UNMutableNotificationContent, a mutable one's (IceCubes) and the request's own immutable content's alike,
        // so iOS gives one; being a subclass, it breaks no code that expects the immutable class.
        let mutable = UNMutableNotificationContent()
        mutable.storage = updated
        return mutable
    }
}

/// The content an extension changes and hands to the content handler.
open class UNMutableNotificationContent: UNNotificationContent {
    open override var title: String {
        get { storage.title }
        set { storage.title = newValue }
    }
    open override var subtitle: String {
        get { storage.subtitle }
        set { storage.subtitle = newValue }
    }
    open override var body: String {
        get { storage.body }
        set { storage.body = newValue }
    }
    open override var badge: NSNumber? {
        get { storage.badge }
        set { storage.badge = newValue }
    }
    open override var sound: UNNotificationSound? {
        get { storage.sound }
        set { storage.sound = newValue }
    }
    open override var userInfo: [AnyHashable: Any] {
        get { storage.userInfo }
        set { storage.userInfo = newValue }
    }
    open override var attachments: [UNNotificationAttachment] {
        get { storage.attachments }
        set { storage.attachments = newValue }
    }
    open override var launchImageName: String {
        get { storage.launchImageName }
        set { storage.launchImageName = newValue }
    }
    open override var threadIdentifier: String {
        get { storage.threadIdentifier }
        set { storage.threadIdentifier = newValue }
    }
    open override var categoryIdentifier: String {
        get { storage.categoryIdentifier }
        set { storage.categoryIdentifier = newValue }
    }
    open override var targetContentIdentifier: String? {
        get { storage.targetContentIdentifier }
        set { storage.targetContentIdentifier = newValue }
    }
    open override var summaryArgument: String {
        get { storage.summaryArgument }
        set { storage.summaryArgument = newValue }
    }
    open override var summaryArgumentCount: Int {
        get { storage.summaryArgumentCount }
        set { storage.summaryArgumentCount = newValue }
    }
    open override var interruptionLevel: UNNotificationInterruptionLevel {
        get { storage.interruptionLevel }
        set { storage.interruptionLevel = newValue }
    }
    open override var relevanceScore: Double {
        get { storage.relevanceScore }
        set { storage.relevanceScore = newValue }
    }
    open override var filterCriteria: String? {
        get { storage.filterCriteria }
        set { storage.filterCriteria = newValue }
    }
}
