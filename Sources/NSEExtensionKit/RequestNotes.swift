public import NSEJSON
import Synchronization

/// What the SDK's modules note about the request being served, beyond its content, for the result's
/// `extension.info`: the widget kinds whose timelines the extension asked to reload (WidgetKit). Cleared when a
/// request starts; taken when its content goes to the host.
public enum RequestNotes {
    private static let widgetReloads = Mutex<[String]>([])

    /// A reload of `kind`'s timelines, or of every kind's (`nil`, written `*`); each once, in the order asked.
    public static func widgetReload(_ kind: String?) {
        let name = kind ?? "*"
        widgetReloads.withLock { if !$0.contains(name) { $0.append(name) } }
    }

    /// The notes since the last call, as `extension.info` members; nothing noted: empty.
    public static func take() -> JSONObject {
        let reloads = widgetReloads.withLock { reloads in
            defer { reloads = [] }
            return reloads
        }
        guard !reloads.isEmpty else { return [:] }
        return ["widget_reloads": .array(reloads.map(JSON.string))]
    }
}
