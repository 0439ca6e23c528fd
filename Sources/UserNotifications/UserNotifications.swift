// UserNotifications, as an iOS Notification Service Extension uses it, on Linux (docs/sdk.md).
//
// A developer's `NotificationService.swift` imports this module unchanged: `UNNotificationServiceExtension` and its
// request and content, attachments, sounds, `UNError`; and what an extension touches beside them (the App Group
// container, `localizedUserNotificationString`). The types are thin: they translate Apple's calls into nse's
// host/extension protocol (docs/protocol.md) and keep no iOS rule of their own — the host judges, as iOS does.
//
// Foundation comes with it, as on iOS, and so does FoundationNetworking: `URLSession` (how most extensions fetch a
// `media-url`) lives there on Linux, and NSE files use it with `import Foundation` and `import UserNotifications`
// alone.
@_exported public import Foundation

#if canImport(FoundationNetworking)
    @_exported public import FoundationNetworking
#endif
