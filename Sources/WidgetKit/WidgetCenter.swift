import Foundation
import NSEExtensionKit

/// The app's widgets as an extension reaches them: reloads asked for and recorded (in the result's
/// `extension.info.widget_reloads`, a kind once, `*` for all), and the installed widgets' configurations, which
/// on nse's devices are none.
public final class WidgetCenter: Sendable {
    public static let shared = WidgetCenter()

    private init() {}

    /// Asks for the timelines of every widget of `kind` to be reloaded.
    public func reloadTimelines(ofKind kind: String) {
        RequestNotes.widgetReload(kind)
    }

    /// Asks for the timelines of every widget of the app to be reloaded.
    public func reloadAllTimelines() {
        RequestNotes.widgetReload(nil)
    }

    /// The widgets the user installed, on a private queue: on nse's devices, none.
    @preconcurrency
    public func getCurrentConfigurations(_ completion: @escaping @Sendable (Result<[WidgetInfo], any Error>) -> Void) {
        DispatchQueue.global().async { completion(.success([])) }
    }

    /// The async form (iOS 17).
    public func currentConfigurations() async throws -> [WidgetInfo] { [] }

    /// Asks the system to refresh the app's configuration recommendations; nse has none to refresh.
    public func invalidateConfigurationRecommendations() {}
}
