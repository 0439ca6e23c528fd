public import Foundation

/// The principal class of a Notification Service Extension: subclass it and override its two methods, as on iOS.
///
/// For each push, nse makes a new instance in the extension's process (iOS does the same, keeping the process for
/// later pushes) and calls ``didReceive(_:withContentHandler:)`` on the main thread, as iOS does; when the budget
/// runs out it calls ``serviceExtensionTimeWillExpire()`` on another thread (Apple: "on a separate thread"), so an
/// instance that blocks the main thread still hears it. The content handler may be called from any thread; the
/// first call counts.
///
/// The two methods are `@preconcurrency @MainActor` where Apple's are Objective-C with no actor: Swift lets an
/// override of such an Objective-C method be `@MainActor` (`@MainActor override func didReceive…`, a `@MainActor`
/// principal class), but an override of a Swift `nonisolated` one may not, and nse's class is Swift. The annotation
/// is what makes those overrides compile unchanged. Its cost: an override with no annotation is main-actor isolated
/// too, so a `Task` it starts runs on the main actor, where on iOS it would run on the global pool (docs/sdk.md).
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

    /// `didReceive`, from the runtime's main-queue job (the main actor's thread, but not known to the compiler there).
    nonisolated func receive(_ request: UNNotificationRequest, handler: @escaping (UNNotificationContent) -> Void) {
        nonisolated(unsafe) let instance = self
        nonisolated(unsafe) let handler = handler
        Self.callUnchecked { instance.didReceive(request, withContentHandler: handler) }
    }

    /// `serviceExtensionTimeWillExpire` from the runtime's expiry queue, not the main thread, as iOS calls it: its
    /// `@MainActor` is for overrides to compile.
    nonisolated func timeWillExpire() {
        nonisolated(unsafe) let instance = self
        Self.callUnchecked { instance.serviceExtensionTimeWillExpire() }
    }

    /// Calls a main-actor closure where the runtime says (a main-actor closure has a plain closure's layout).
    private nonisolated static func callUnchecked(_ call: @MainActor () -> Void) {
        withoutActuallyEscaping(call) { unsafeBitCast($0, to: (() -> Void).self)() }
    }
}
