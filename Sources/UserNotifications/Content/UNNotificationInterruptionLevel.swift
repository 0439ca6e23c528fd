/// How urgently a notification interrupts (iOS 15), with Apple's raw values; `aps.interruption-level` names them.
public enum UNNotificationInterruptionLevel: UInt, Sendable, Hashable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3

    /// The `aps.interruption-level` string.
    var apsValue: String {
        switch self {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "time-sensitive"
        case .critical: "critical"
        }
    }

    init?(apsValue: String) {
        switch apsValue {
        case "passive": self = .passive
        case "active": self = .active
        case "time-sensitive": self = .timeSensitive
        case "critical": self = .critical
        default: return nil
        }
    }
}
