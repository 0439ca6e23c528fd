import NSEDevice
import NSEJSON

/// What a shown notification asks for that its app's entitlements do not allow: iOS shows it all the same, as an
/// ordinary one, and tells nobody (`aps.interruption-level` `time-sensitive` needs
/// com.apple.developer.usernotifications.time-sensitive; `critical`, and a critical sound, need
/// com.apple.developer.usernotifications.critical-alerts). nse says so in a warning.
enum InterruptionEntitlements {
    static func warnings(for notification: JSONObject, device: DeviceConfig) -> [String] {
        let aps = notification["aps"]
        var warnings: [String] = []
        switch aps?["interruption-level"]?.stringValue {
        case "time-sensitive" where !device.timeSensitive:
            warnings.append(
                "interruption-level time-sensitive shown as active: the app lacks com.apple.developer.usernotifications.time-sensitive"
            )
        case "critical" where !device.criticalAlerts:
            warnings.append(
                "interruption-level critical shown as active: the app lacks com.apple.developer.usernotifications.critical-alerts"
            )
        default: break
        }
        if aps?["sound"]?["critical"]?.intValue == 1, !device.criticalAlerts {
            warnings.append(
                "critical sound played as an ordinary one: the app lacks com.apple.developer.usernotifications.critical-alerts"
            )
        }
        return warnings
    }
}
