// WidgetKit, as far as a Notification Service Extension uses it: `WidgetCenter`, to have the app's widgets show
// what the push brought (an unread count, the last message) by reloading their timelines. nse has no widgets to draw;
// it records what was asked, in the result's `extension.info.widget_reloads` (docs/sdk.md), and answers the
// configurations of a device's installed widgets: none, since nse's devices have no home screen. The widget
// extension's side (`Widget`, `TimelineProvider`, SwiftUI views) is not here.
@_exported public import Foundation
