public import Foundation

/// The principal class of a Notification Service Extension: subclass it and override its two methods, as on iOS.
///
/// For each push, nse makes a new instance in the extension's process (iOS does the same, keeping the process for
/// later pushes) and calls ``didReceive(_:withContentHandler:)`` on a queue of its own; when the budget runs out it
/// calls ``serviceExtensionTimeWillExpire()`` on another, so an instance that blocks in the first still hears the
/// second. The content handler may be called from any thread; the first call counts.
open class UNNotificationServiceExtension: NSObject {
    public override init() {
        super.init()
    }

    /// Modify the request's content, then call `contentHandler` with it. Apple's default shows the content as it is.
    open func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        contentHandler(request.content)
    }

    /// Time is about to run out: call the content handler with a best attempt now.
    open func serviceExtensionTimeWillExpire() {}
}
