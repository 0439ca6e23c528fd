import UserNotifications

// Where iOS's NSExtensionMain would start the extension: the principal class, one instance per push.
NSEServiceExtension.main { NotificationService() }
