import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem

/// What the app's registered category (`aps.category`, or the `categoryIdentifier` the extension set) adds to a
/// shown notification, as Apple documents `UNNotificationCategory`: its action buttons ("after the notification's
/// content but before the Dismiss button"; a banner shows only the first two), and, when Show Previews hides the
/// content, the category's `hiddenPreviewsBodyPlaceholder` (its `%u` the number of the app's notifications in the
/// thread) in place of "Notification", with the title and subtitle kept when its options say so. A category the app
/// did not register shows no actions, silently on iOS; nse warns when the app registered others.
struct CategoryPresentation: Equatable {
    /// The actions as the expanded notification draws them, in order (`actions` in the result document).
    var actions: [JSON] = []
    /// What the lock screen shows in place of the content, when previews are hidden (`hidden_preview`).
    var hiddenPreview: JSONObject?
    var warnings: [String] = []

    /// Apple's `UNNotificationCategoryOptions` raw values.
    static let showsTitle: Int64 = 1 << 2
    static let showsSubtitle: Int64 = 1 << 3
    /// Apple's `UNNotificationActionOptions` raw values, and the names the result document gives them.
    static let actionOptions: [(Int64, String)] = [
        (1 << 0, "authentication-required"), (1 << 1, "destructive"), (1 << 2, "foreground"),
    ]

    /// - Parameters:
    ///   - threadCount: the app's notifications in this one's thread, itself included (asked only for a placeholder
    ///     with `%u`).
    static func make(
        notification: JSONObject, display: Display, previewHidden: Bool, device: Device, strings: StringsTable,
        threadCount: () -> Int
    ) -> CategoryPresentation {
        var presentation = CategoryPresentation()
        let identifier = notification["aps"]?["category"]?.stringValue ?? ""
        var category: JSONObject?
        if !identifier.isEmpty {
            do {
                let registered = try device.notificationCategories.categories()
                category = registered.last { $0["identifier"]?.stringValue == identifier }
                // An app that registered none: most likely a device whose app's launch nse never ran (nothing to
                // compare with), not a misspelt identifier.
                if category == nil, !registered.isEmpty {
                    presentation.warnings.append(
                        "aps.category names no category the app registered (setNotificationCategories): shown without "
                            + "actions")
                }
            } catch {
                presentation.warnings.append("the app's notification categories not read: \(error.description)")
            }
        }
        if let category {
            presentation.actions = (category["actions"]?.arrayValue ?? []).compactMap { $0.objectValue.map(action) }
        }
        if previewHidden {
            let options = category?["options"]?.intValue ?? 0
            var shown: JSONObject = [:]
            if options & showsTitle != 0, !display.title.isEmpty { shown["title"] = .string(display.title) }
            if options & showsSubtitle != 0, !display.subtitle.isEmpty { shown["subtitle"] = .string(display.subtitle) }
            shown["body"] = .string(
                placeholder(category?["hidden_previews_body_placeholder"]?.stringValue, strings, threadCount))
            presentation.hiddenPreview = shown
        }
        return presentation
    }

    /// The app's notifications in Notification Center with this `thread-id` (none: those without one), at least the
    /// one just shown.
    static func threadCount(_ thread: String, in device: Device) -> Int {
        let shown = (try? device.notificationCenter.state().delivered) ?? []
        return max(1, shown.filter { ($0.notification["aps"]?["thread-id"]?.stringValue ?? "") == thread }.count)
    }

    /// An action as the result document gives it: identifier, title, its options by name, a text input's button and
    /// placeholder, its icon.
    static func action(_ stored: JSONObject) -> JSON {
        var action: JSONObject = [
            "identifier": stored["identifier"] ?? "", "title": stored["title"] ?? "",
        ]
        let raw = stored["options"]?.intValue ?? 0
        action["options"] = .array(actionOptions.filter { raw & $0.0 != 0 }.map { .string($0.1) })
        if let input = stored["text_input"] { action["text_input"] = input }
        if let icon = stored["icon"] { action["icon"] = icon }
        return .object(action)
    }

    /// The body shown in place of the content: the category's placeholder (a key of the app's strings, or the text
    /// itself), `%u` and `%1$u` the thread's count and `%%` a percent sign, read left to right; "Notification" when it
    /// has none, or its text is empty.
    static func placeholder(_ text: String?, _ strings: StringsTable, _ threadCount: () -> Int) -> String {
        guard let text, !text.isEmpty else { return NotificationPreviews.placeholder }
        let format = strings.format(for: text)
        var shown = ""
        var count: String?
        var rest = Substring(format)
        while let percent = rest.firstIndex(of: "%") {
            shown += rest[..<percent]
            let after = rest[rest.index(after: percent)...]
            if after.first == "%" {
                shown += "%"
                rest = after.dropFirst()
            } else if after.first == "u" || after.hasPrefix("1$u") {
                let value = count ?? String(threadCount())
                count = value
                shown += value
                rest = after.dropFirst(after.first == "u" ? 1 : 3)
            } else {
                shown += "%"
                rest = after
            }
        }
        shown += rest
        return shown.isEmpty ? NotificationPreviews.placeholder : shown
    }
}
