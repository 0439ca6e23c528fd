public import Foundation

/// How the notifications of a category are handled.
public struct UNNotificationCategoryOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Tell the app when the user dismisses the notification.
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    /// With previews hidden, still show the title.
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    /// With previews hidden, still show the subtitle.
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    @available(*, deprecated, message: "Announcement option is ignored")
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

/// A kind of notification the app handles, named by a content's `categoryIdentifier`: its action buttons and how
/// its notifications are shown. The app's set is the system's, replaced whole by
/// ``UNUserNotificationCenter/setNotificationCategories(_:)``.
open class UNNotificationCategory: NSObject, NSCopying, @unchecked Sendable {
    open var identifier: String { _identifier }
    open var actions: [UNNotificationAction] { _actions }
    open var intentIdentifiers: [String] { _intentIdentifiers }
    open var options: UNNotificationCategoryOptions { _options }
    /// What a notification with hidden previews says instead of its body ("" for the system's "Notification").
    open var hiddenPreviewsBodyPlaceholder: String { _hiddenPreviewsBodyPlaceholder }
    /// A summary of a group of them ("%u more messages"; "" for the system's).
    open var categorySummaryFormat: String { _categorySummaryFormat }

    private let _identifier: String
    private let _actions: [UNNotificationAction]
    private let _intentIdentifiers: [String]
    private let _options: UNNotificationCategoryOptions
    private let _hiddenPreviewsBodyPlaceholder: String
    private let _categorySummaryFormat: String

    /// iOS 12: every property.
    public init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?,
        options: UNNotificationCategoryOptions = []
    ) {
        _identifier = identifier
        _actions = actions
        _intentIdentifiers = intentIdentifiers
        _options = options
        _hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder ?? ""
        _categorySummaryFormat = categorySummaryFormat ?? ""
        super.init()
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
            hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil, options: options)
    }

    /// iOS 11.
    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
            hiddenPreviewsBodyPlaceholder: hiddenPreviewsBodyPlaceholder, categorySummaryFormat: nil, options: options)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationCategory else { return false }
        return other.identifier == identifier && other.actions == actions
            && other.intentIdentifiers == intentIdentifiers && other.options == options
            && other.hiddenPreviewsBodyPlaceholder == hiddenPreviewsBodyPlaceholder
            && other.categorySummaryFormat == categorySummaryFormat
    }

    open override var hash: Int { identifier.hashValue }
}
