public import Foundation
import NSEDevice

/// Whether the app may show notifications at all.
public enum UNAuthorizationStatus: Int, Sendable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}

/// One of the app's notification settings.
public enum UNNotificationSetting: Int, Sendable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

/// How an unlocked phone presents the app's notifications.
public enum UNAlertStyle: Int, Sendable {
    case none = 0
    case banner = 1
    case alert = 2
}

/// Show Previews: when the lock screen shows a notification's content.
public enum UNShowPreviewsSetting: Int, Sendable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}

/// The app's notification settings as the device has them (docs/sdk.md): authorized, as the app of a device whose
/// pushes are shown is; Show Previews from the device (`nse device set --show-previews`); what an entitlement allows
/// (critical alerts, time-sensitive, communication) enabled with it and not supported without it.
open class UNNotificationSettings: NSObject, NSCopying, @unchecked Sendable {
    open var authorizationStatus: UNAuthorizationStatus { .authorized }
    open var soundSetting: UNNotificationSetting { .enabled }
    open var badgeSetting: UNNotificationSetting { .enabled }
    open var alertSetting: UNNotificationSetting { .enabled }
    open var notificationCenterSetting: UNNotificationSetting { .enabled }
    open var lockScreenSetting: UNNotificationSetting { .enabled }
    /// The app did not ask for CarPlay (`UNAuthorizationOptions.carPlay`): the setting does not exist for it.
    open var carPlaySetting: UNNotificationSetting { .notSupported }
    open var alertStyle: UNAlertStyle { .banner }
    open var showPreviewsSetting: UNShowPreviewsSetting { _showPreviews }
    open var criticalAlertSetting: UNNotificationSetting { _criticalAlerts }
    open var providesAppNotificationSettings: Bool { false }
    /// Announce Notifications (Siri): not asked for either.
    open var announcementSetting: UNNotificationSetting { .notSupported }
    open var timeSensitiveSetting: UNNotificationSetting { _timeSensitive }
    /// Scheduled Summary is off until the user turns it on.
    open var scheduledDeliverySetting: UNNotificationSetting { .disabled }
    open var directMessagesSetting: UNNotificationSetting { _directMessages }

    private let _showPreviews: UNShowPreviewsSetting
    private let _criticalAlerts: UNNotificationSetting
    private let _timeSensitive: UNNotificationSetting
    private let _directMessages: UNNotificationSetting

    /// The settings of `config`'s app (iOS's defaults without a device).
    init(_ config: DeviceConfig?) {
        switch config?.showPreviews ?? .whenUnlocked {
        case .always: _showPreviews = .always
        case .whenUnlocked: _showPreviews = .whenAuthenticated
        case .never: _showPreviews = .never
        }
        func entitled(_ granted: Bool?) -> UNNotificationSetting { granted == true ? .enabled : .notSupported }
        _criticalAlerts = entitled(config?.criticalAlerts)
        _timeSensitive = entitled(config?.timeSensitive)
        _directMessages = entitled(config?.communication)
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }
}
