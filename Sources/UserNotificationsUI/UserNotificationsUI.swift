// UserNotificationsUI is the framework of Notification *Content* Extensions (a custom view for a notification),
// which have no place in nse: it runs service extensions. Files of a service extension sometimes import it all the
// same (a shared helper, a copied template); this module makes that import compile, and gives UserNotifications.
// Its content-extension API (UNNotificationContentExtension, its view controller) is not here (docs/sdk.md).
@_exported public import UserNotifications
