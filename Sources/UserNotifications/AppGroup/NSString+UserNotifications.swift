public import Foundation
import NSEDevice
import NSEExtensionKit
import NSEPayload

extension NSString {
    /// The text for `key` in the app's strings (`Localizable.strings` of the device's locale), with `arguments` put
    /// in its `%@` and `%n$@` places, as the lock screen renders a `loc-key`; `key` itself when no table has it, as
    /// on iOS.
    public class func localizedUserNotificationString(forKey key: String, arguments: [Any]?) -> String {
        let table = ExtensionHost.shared.device?.strings().table ?? StringsTable()
        let words = (arguments ?? []).map { "\($0)" }
        return table.localized(key, arguments: words)
    }
}
