// UserNotifications, as an iOS Notification Service Extension uses it, on Linux (docs/sdk.md).
//
// A developer's `NotificationService.swift` imports this module unchanged: `UNNotificationServiceExtension` and its
// request and content, attachments, sounds, `UNError`; and what an extension touches beside them (the App Group
// container, `localizedUserNotificationString`, Notification Center and the app's categories: `Center/`,
// `Categories/`), and `String(localized:)`, Foundation's on iOS, which Foundation on Linux lacks (`Localization/`).
// The types are thin: they translate Apple's calls into nse's
// host/extension protocol (docs/protocol.md) and keep no iOS rule of their own — the host judges, as iOS does.
//
// Foundation comes with it, as on iOS. FoundationNetworking (`URLSession` on Linux) does not: it loads libcurl and
// some 30 libraries, 8 ms of every start; `nse extension build` imports it into the files of a target that uses it,
// and a SwiftPM target adds it (docs/sdk.md).
@_exported public import Foundation
