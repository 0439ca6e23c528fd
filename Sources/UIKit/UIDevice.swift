public import Foundation
import NSECrypto
import NSEDevice
import NSEExtensionKit
import Synchronization

/// What kind of device: an iPhone here.
public enum UIUserInterfaceIdiom: Int, Sendable {
    case unspecified = -1
    case phone = 0
    case pad = 1
    case tv = 2
    case carPlay = 3
    case mac = 5
    case vision = 6
}

/// Which way the device is held.
public enum UIDeviceOrientation: Int, Sendable {
    case unknown = 0
    case portrait = 1
    case portraitUpsideDown = 2
    case landscapeLeft = 3
    case landscapeRight = 4
    case faceUp = 5
    case faceDown = 6

    public var isPortrait: Bool { self == .portrait || self == .portraitUpsideDown }
    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
    public var isFlat: Bool { self == .faceUp || self == .faceDown }
    public var isValidInterfaceOrientation: Bool { isPortrait || isLandscape }
}

/// The device the extension runs on, as an app sees it: an iPhone running the device's iOS release
/// (`nse device set --ios-version`), its vendor identifier stable for the device and the team. What an extension
/// cannot read on iOS either it reads as iOS gives it: the name is the generic "iPhone" (iOS 16 without the entitlement),
/// the orientation unknown (nothing generates its notifications), the battery unknown (-1).
///
/// Apple's class is main-actor isolated; this one may be read from any thread, as Swift 5 mode code reads Apple's.
open class UIDevice: NSObject, @unchecked Sendable {
    /// The battery as the device reports it.
    public enum BatteryState: Int, Sendable {
        case unknown = 0
        case unplugged = 1
        case charging = 2
        case full = 3
    }

    private static let shared = UIDevice()

    open class var current: UIDevice { shared }

    public static let orientationDidChangeNotification = Notification.Name("UIDeviceOrientationDidChangeNotification")
    public static let batteryStateDidChangeNotification = Notification.Name("UIDeviceBatteryStateDidChangeNotification")
    public static let batteryLevelDidChangeNotification = Notification.Name("UIDeviceBatteryLevelDidChangeNotification")
    public static let proximityStateDidChangeNotification = Notification.Name(
        "UIDeviceProximityStateDidChangeNotification")

    /// Battery monitoring on, and how many began orientation notifications.
    private let switches = Mutex((battery: false, orientation: 0))

    open var name: String { "iPhone" }
    open var model: String { "iPhone" }
    open var localizedModel: String { "iPhone" }
    open var systemName: String { "iOS" }
    /// The device's iOS release, "26.1".
    open var systemVersion: String { (ExtensionHost.shared.device?.config.iosVersion ?? .current).description }
    open var userInterfaceIdiom: UIUserInterfaceIdiom { .phone }
    open var orientation: UIDeviceOrientation { .unknown }
    open var isMultitaskingSupported: Bool { true }

    /// The same for every app of a team on one device, as iOS keeps it (until the last of them is removed): derived
    /// from the device's token and the team.
    open var identifierForVendor: UUID? {
        guard let config = ExtensionHost.shared.device?.config else { return nil }
        // Version 4 layout, as iOS's are.
        return UUID(
            uuidString: Hex.uuid(Digest.sha256(Array("nse-vendor\0\(config.remoteToken)\0\(config.teamID)".utf8))))
    }

    open var isBatteryMonitoringEnabled: Bool {
        get { switches.withLock { $0.battery } }
        set { switches.withLock { $0.battery = newValue } }
    }
    /// -1: unknown (nse's device has no battery to read).
    open var batteryLevel: Float { -1 }
    open var batteryState: BatteryState { .unknown }

    open var isGeneratingDeviceOrientationNotifications: Bool { switches.withLock { $0.orientation > 0 } }
    /// Counted, as iOS counts them; none is ever posted (the orientation stays unknown).
    open func beginGeneratingDeviceOrientationNotifications() { switches.withLock { $0.orientation += 1 } }
    open func endGeneratingDeviceOrientationNotifications() {
        switches.withLock { $0.orientation = max(0, $0.orientation - 1) }
    }

    open var isProximityMonitoringEnabled: Bool {
        get { false }
        set {}
    }
    open var proximityState: Bool { false }

    /// The keyboard's click: no sound here.
    open func playInputClick() {}
}
