public import Foundation

/// How an action behaves when the user picks it.
public struct UNNotificationActionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Only on an unlocked device.
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    /// Shown as destructive (in red).
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    /// Opens the app.
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// An action's icon (iOS 15): an image of the app's asset catalog or an SF Symbol, by name.
open class UNNotificationActionIcon: NSObject, NSCopying, @unchecked Sendable {
    enum Source: Equatable {
        case template(String)
        case system(String)
    }

    let source: Source

    init(source: Source) {
        self.source = source
        super.init()
    }

    public convenience init(templateImageName: String) { self.init(source: .template(templateImageName)) }

    public convenience init(systemImageName: String) { self.init(source: .system(systemImageName)) }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationActionIcon)?.source == source }

    open override var hash: Int {
        switch source {
        case .template(let name), .system(let name): name.hashValue
        }
    }
}

/// A button of a notification's category: its identifier comes back to the app in the user's response.
open class UNNotificationAction: NSObject, NSCopying, @unchecked Sendable {
    open var identifier: String { _identifier }
    open var title: String { _title }
    open var options: UNNotificationActionOptions { _options }
    open var icon: UNNotificationActionIcon? { _icon }

    private let _identifier: String
    private let _title: String
    private let _options: UNNotificationActionOptions
    private let _icon: UNNotificationActionIcon?

    /// iOS 15: with an icon.
    public init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?
    ) {
        _identifier = identifier
        _title = title
        _options = options
        _icon = icon
        super.init()
    }

    public convenience init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.init(identifier: identifier, title: title, options: options, icon: nil)
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationAction, type(of: other) == type(of: self) else { return false }
        return other.identifier == identifier && other.title == title && other.options == options
            && other.icon == icon
    }

    open override var hash: Int { identifier.hashValue }
}

/// An action that asks the user for text (a reply), sent back to the app with the response.
open class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    open var textInputButtonTitle: String { _textInputButtonTitle }
    open var textInputPlaceholder: String { _textInputPlaceholder }

    private let _textInputButtonTitle: String
    private let _textInputPlaceholder: String

    /// iOS 15: with an icon.
    public init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?,
        textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        _textInputButtonTitle = textInputButtonTitle
        _textInputPlaceholder = textInputPlaceholder
        super.init(identifier: identifier, title: title, options: options, icon: icon)
    }

    public convenience init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], textInputButtonTitle: String,
        textInputPlaceholder: String
    ) {
        self.init(
            identifier: identifier, title: title, options: options, icon: nil,
            textInputButtonTitle: textInputButtonTitle, textInputPlaceholder: textInputPlaceholder)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNTextInputNotificationAction, super.isEqual(object) else { return false }
        return other.textInputButtonTitle == textInputButtonTitle && other.textInputPlaceholder == textInputPlaceholder
    }
}
