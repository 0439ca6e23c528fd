import NSEJSON

/// The app's categories as the device keeps them (`notification-categories.json`, docs/sdk.md) and back.
enum CategoryEncoding {
    static func json(_ category: UNNotificationCategory) -> JSONObject {
        var object: JSONObject = [
            "identifier": .string(category.identifier), "actions": .array(category.actions.map { .object(json($0)) }),
            "intent_identifiers": .array(category.intentIdentifiers.map(JSON.string)),
            "options": .int(Int64(category.options.rawValue)),
        ]
        if !category.hiddenPreviewsBodyPlaceholder.isEmpty {
            object["hidden_previews_body_placeholder"] = .string(category.hiddenPreviewsBodyPlaceholder)
        }
        if !category.categorySummaryFormat.isEmpty {
            object["category_summary_format"] = .string(category.categorySummaryFormat)
        }
        return object
    }

    static func json(_ action: UNNotificationAction) -> JSONObject {
        var object: JSONObject = [
            "identifier": .string(action.identifier), "title": .string(action.title),
            "options": .int(Int64(action.options.rawValue)),
        ]
        switch action.icon?.source {
        case .template(let name)?: object["icon"] = ["template": .string(name)]
        case .system(let name)?: object["icon"] = ["system": .string(name)]
        case nil: break
        }
        if let input = action as? UNTextInputNotificationAction {
            object["text_input"] = [
                "button_title": .string(input.textInputButtonTitle), "placeholder": .string(input.textInputPlaceholder),
            ]
        }
        return object
    }

    static func category(_ object: JSONObject) -> UNNotificationCategory? {
        guard let identifier = object["identifier"]?.stringValue else { return nil }
        return UNNotificationCategory(
            identifier: identifier,
            actions: (object["actions"]?.arrayValue ?? []).compactMap { $0.objectValue.flatMap(action) },
            intentIdentifiers: (object["intent_identifiers"]?.arrayValue ?? []).compactMap(\.stringValue),
            hiddenPreviewsBodyPlaceholder: object["hidden_previews_body_placeholder"]?.stringValue,
            categorySummaryFormat: object["category_summary_format"]?.stringValue,
            options: UNNotificationCategoryOptions(rawValue: UInt(max(0, object["options"]?.intValue ?? 0))))
    }

    static func action(_ object: JSONObject) -> UNNotificationAction? {
        guard let identifier = object["identifier"]?.stringValue, let title = object["title"]?.stringValue else {
            return nil
        }
        let options = UNNotificationActionOptions(rawValue: UInt(max(0, object["options"]?.intValue ?? 0)))
        let icon: UNNotificationActionIcon? =
            if let name = object["icon"]?["template"]?.stringValue {
                UNNotificationActionIcon(templateImageName: name)
            } else if let name = object["icon"]?["system"]?.stringValue {
                UNNotificationActionIcon(systemImageName: name)
            } else {
                nil
            }
        if let input = object["text_input"]?.objectValue {
            return UNTextInputNotificationAction(
                identifier: identifier, title: title, options: options, icon: icon,
                textInputButtonTitle: input["button_title"]?.stringValue ?? "",
                textInputPlaceholder: input["placeholder"]?.stringValue ?? "")
        }
        return UNNotificationAction(identifier: identifier, title: title, options: options, icon: icon)
    }
}
