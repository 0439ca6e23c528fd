public import NSEJSON

/// The app's "Show Previews" setting (Settings › Notifications), `UNNotificationSettings.showPreviewsSetting`: whether
/// the lock screen shows a notification's content or only the app's name and "Notification"
/// (`nse device set --show-previews`).
public enum NotificationPreviews: String, Sendable, Equatable, CaseIterable, JSONConvertible {
    /// Shown even when the phone is locked.
    case always
    /// Shown only when it is unlocked: iOS's default.
    case whenUnlocked = "when-unlocked"
    /// Never shown, even unlocked.
    case never

    /// Whether the lock screen hides the content with the phone in `lockState`.
    public func hidesContent(_ lockState: DeviceLockState) -> Bool {
        switch self {
        case .always: false
        case .whenUnlocked: lockState != .unlocked
        case .never: true
        }
    }

    /// What iOS shows in place of hidden content (`UNNotificationCategory`'s default `hiddenPreviewsBodyPlaceholder`).
    public static let placeholder = "Notification"
}
