public import Foundation

/// The principal class of a Notification Service Extension: subclass it and override its two methods, as on iOS.
///
/// For each push, nse makes a new instance in the extension's process (iOS does the same, keeping the process for
/// later pushes) and calls ``didReceive(_:withContentHandler:)`` on a queue of its own; when the budget runs out it
/// calls ``serviceExtensionTimeWillExpire()`` on another, so an instance that blocks in the first still hears the
/// second. The content handler may be called from any thread; the first call counts.
///
/// The two methods are `@preconcurrency @MainActor` where Apple's are Objective-C with no actor: Swift lets an
/// override of such an Objective-C method be `@MainActor` (`@MainActor override func didReceive…`, a `@MainActor`
/// principal class, a target whose default isolation is the main actor), but an override of a Swift `nonisolated`
/// one may not, and nse's class is Swift. The annotation is what makes those overrides compile unchanged; nse still
/// calls both methods on their own queues, as above, never waiting for the main thread.
open class UNNotificationServiceExtension: NSObject {
    public override init() {
        super.init()
    }

    /// Modify the request's content, then call `contentHandler` with it. Apple's default shows the content as it is.
    @preconcurrency @MainActor
    open func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        contentHandler(request.content)
    }

    /// Time is about to run out: call the content handler with a best attempt now.
    @preconcurrency @MainActor
    open func serviceExtensionTimeWillExpire() {}

    /// `didReceive` from the runtime's queue. Its `@MainActor` is for overrides to compile (above); nse does not run
    /// it on the main thread, so that a `Task` the override starts and then waits for is not stuck behind it.
    nonisolated func receive(_ request: UNNotificationRequest, handler: @escaping (UNNotificationContent) -> Void) {
        nonisolated(unsafe) let instance = self
        nonisolated(unsafe) let handler = handler
        let call: @MainActor () -> Void = { instance.didReceive(request, withContentHandler: handler) }
        unsafeBitCast(call, to: (() -> Void).self)()
    }

    /// `serviceExtensionTimeWillExpire` from the runtime's expiry queue, as `receive` is called.
    nonisolated func timeWillExpire() {
        nonisolated(unsafe) let instance = self
        let call: @MainActor () -> Void = { instance.serviceExtensionTimeWillExpire() }
        unsafeBitCast(call, to: (() -> Void).self)()
    }
}
