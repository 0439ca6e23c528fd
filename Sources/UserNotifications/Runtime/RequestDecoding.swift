import Foundation
import NSEDevice
import NSEExtensionKit
import NSEJSON
import NSEPayload
import NSEProtocol

/// A push as iOS hands it to an extension: its content made from `aps` (loc keys rendered with the app's strings,
/// as the lock screen would show them), the whole payload as `userInfo`, a push trigger.
enum RequestDecoding {
    static func request(_ request: ServiceRequest, device: Device?) -> UNNotificationRequest {
        UNNotificationRequest(
            identifier: request.identifier,
            frozenContent: UNNotificationContent(
                storage: content(request.payload, strings: device?.strings().table ?? StringsTable())),
            trigger: UNPushNotificationTrigger())
    }

    /// The content iOS makes of a payload (a push's, or a delivered notification's as it was shown).
    static func content(_ payload: JSONObject, strings: StringsTable) -> UNNotificationContent.Storage {
        var warnings: [String] = []
        let aps = payload["aps"]?.objectValue.map { APS($0, warnings: &warnings) } ?? APS()
        var storage = UNNotificationContent.Storage()
        let display = Display(alert: aps.alert, strings: strings)
        storage.title = display.title
        storage.subtitle = display.subtitle
        storage.body = display.body
        storage.badge = aps.badge.map { NSNumber(value: $0) }
        if let name = aps.sound {
            storage.sound =
                aps.criticalSound
                ? UNNotificationSound.criticalSoundNamed(UNNotificationSoundName(name))
                : name == "default" ? .default : UNNotificationSound(named: UNNotificationSoundName(name))
        }
        storage.userInfo = PropertyListJSON.dictionary(payload)
        storage.threadIdentifier = aps.threadID ?? ""
        storage.categoryIdentifier = aps.category ?? ""
        storage.targetContentIdentifier = aps.targetContentID
        storage.interruptionLevel = aps.interruptionLevel.flatMap(UNNotificationInterruptionLevel.init) ?? .active
        storage.relevanceScore = aps.relevanceScore ?? 0
        if case .fields(let fields) = aps.alert { storage.launchImageName = fields.launchImage ?? "" }
        storage.filterCriteria = payload["aps"]?["filter-criteria"]?.stringValue
        // Grouped notifications (iOS 12): in the alert dictionary.
        let alert = payload["aps"]?["alert"]
        storage.summaryArgument = alert?["summary-arg"]?.stringValue ?? ""
        if let count = alert?["summary-arg-count"]?.intValue, count >= 0 { storage.summaryArgumentCount = Int(count) }
        return storage
    }
}
