public import Foundation
import NSEDevice
import NSEExtensionKit
import NSESystem

extension FileManager {
    /// The shared container of an App Group the app's entitlements list (`com.apple.security.application-groups`,
    /// `nse device set --entitlements`): a folder in the device's container, `AppGroups/<identifier>`, made on first
    /// use. `nil` for a group the entitlements do not list, as on iOS, and before the process has a request.
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? {
        guard let device = ExtensionHost.shared.device, device.config.appGroups.contains(groupIdentifier) else {
            return nil
        }
        let path = Path.join(device.directory, "AppGroups", groupIdentifier)
        try? createDirectory(atPath: path, withIntermediateDirectories: true)
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}

/// `UserDefaults(suiteName:)` of an App Group, shared by the app's processes as on iOS. Foundation on Linux writes a
/// suite to disk only on `synchronize()`, and reads another process's writes only then, where iOS does both by
/// itself: the runner synchronizes each group's suite when a request comes and when its instance is done.
enum AppGroupDefaults {
    static func reload(groups: [String]) {
        for group in groups { _ = UserDefaults(suiteName: group)?.synchronize() }
    }

    static func save(groups: [String]) {
        for group in groups { _ = UserDefaults(suiteName: group)?.synchronize() }
        _ = UserDefaults.standard.synchronize()
    }
}
