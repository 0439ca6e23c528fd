public import NSEJSON
public import NSEProtocol

/// A local notification an extension added during a push (`UNUserNotificationCenter.add(_:)`), as the push's result
/// lists it (`local_notifications`, docs/result.md): shown at once, or scheduled. Only what the lock screen shows
/// of it, and when.
public struct LocalNotification: Sendable, Equatable, JSONConvertible {
    public var identifier: String
    public var title: String
    public var subtitle: String
    public var body: String
    public var threadIdentifier: String
    /// Nil: shown when it was added.
    public var trigger: NotificationAddition.Trigger?
    /// Shown at once with its content hidden by Show Previews: the lock screen shows the app and "Notification".
    public var previewHidden = false
    /// Shown at once with its content hidden: what the lock screen shows instead (`hidden_preview`, as a push's).
    public var hiddenPreview: JSONObject?
    /// Shown at once: its category's buttons (`actions`, as a push's).
    public var actions: [JSON] = []

    public init(
        identifier: String, title: String, subtitle: String, body: String, threadIdentifier: String,
        trigger: NotificationAddition.Trigger?
    ) {
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.threadIdentifier = threadIdentifier
        self.trigger = trigger
    }

    public static var jsonKind: String { "an object" }

    /// `{"identifier", "shown", "display": {"title", "subtitle", "body"}, "thread_id", "trigger"}`, and
    /// `"preview_hidden": true` when Show Previews hid it, with `hidden_preview`; `actions`; the trigger without the
    /// calendar's components (what the app asked for is the app's).
    public var json: JSON {
        var trigger = self.trigger?.json.objectValue
        trigger?["date_components"] = nil
        var object: JSONObject = [
            "identifier": .string(identifier), "shown": .bool(self.trigger == nil),
            "display": ["title": .string(title), "subtitle": .string(subtitle), "body": .string(body)],
            "thread_id": .string(threadIdentifier), "trigger": trigger.map(JSON.object) ?? .null,
        ]
        if previewHidden { object["preview_hidden"] = true }
        if let hiddenPreview { object["hidden_preview"] = .object(hiddenPreview) }
        if !actions.isEmpty { object["actions"] = .array(actions) }
        return .object(object)
    }

    public init(json: JSON) throws(JSONFieldError) {
        let object = try JSONObject(json: json)
        identifier = try object.field("identifier")
        title = try object.field("display", "title") ?? ""
        subtitle = try object.field("display", "subtitle") ?? ""
        body = try object.field("display", "body") ?? ""
        threadIdentifier = try object.field("thread_id") ?? ""
        trigger = try object.field("trigger")
        previewHidden = try object.field("preview_hidden") ?? false
        hiddenPreview = object["hidden_preview"]?.objectValue
        actions = object["actions"]?.arrayValue ?? []
    }
}
