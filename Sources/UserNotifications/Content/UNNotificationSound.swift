public import Foundation

/// A sound's file name, as Apple's `UNNotificationSoundName` (not a string literal on iOS either).
public struct UNNotificationSoundName: Hashable, Equatable, RawRepresentable, Sendable {
    public var rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// The sound a notification plays: the default, a named file, a critical alert or a ringtone. nse records what
/// would play (`aps.sound` of the delivered content); it plays nothing.
///
/// `public`, not `open`: nothing subclasses a sound (its `Self`-returning factories need an initializer subclasses
/// could not see).
public class UNNotificationSound: NSObject, NSCopying {
    enum Kind: Equatable {
        case `default`, ringtone
        case named(String)
        case critical(name: String?, volume: Float?)
        case namedRingtone(String)
    }

    let kind: Kind

    required init(kind: Kind) {
        self.kind = kind
        super.init()
    }

    public convenience init(named name: UNNotificationSoundName) {
        self.init(kind: .named(name.rawValue))
    }

    public class var `default`: UNNotificationSound { UNNotificationSound(kind: .default) }

    /// iOS 12; needs the critical-alerts entitlement on a device to play as one.
    public class var defaultCritical: UNNotificationSound {
        UNNotificationSound(kind: .critical(name: nil, volume: nil))
    }

    /// iOS 15.2.
    public class var defaultRingtone: UNNotificationSound { UNNotificationSound(kind: .ringtone) }

    public class func defaultCriticalSound(withAudioVolume volume: Float) -> Self {
        self.init(kind: .critical(name: nil, volume: volume))
    }

    public class func criticalSoundNamed(_ name: UNNotificationSoundName) -> Self {
        self.init(kind: .critical(name: name.rawValue, volume: nil))
    }

    public class func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float) -> Self {
        self.init(kind: .critical(name: name.rawValue, volume: volume))
    }

    public class func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> Self {
        self.init(kind: .namedRingtone(name.rawValue))
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationSound)?.kind == kind }
    public override var hash: Int { "\(kind)".hashValue }
}
