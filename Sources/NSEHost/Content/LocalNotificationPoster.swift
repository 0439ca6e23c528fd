import NSEDevice
import NSEJSON
import NSEPayload
import NSEProtocol
import NSESystem

/// What the system does with an extension's `UNUserNotificationCenter.add(_:)`: refuses it as iOS does, or shows it
/// in the device's Notification Center (no trigger) or keeps it there until its trigger fires.
struct LocalNotificationPoster: Sendable {
    let device: Device
    /// The app's strings, for a content that names `loc-key`s.
    let strings: StringsTable

    /// Adds `addition` at `now` (Unix milliseconds); what the push's result lists of it, or UNError's code.
    func add(_ addition: NotificationAddition, now: Int64 = SystemClock.unixMilliseconds()) -> Result<
        LocalNotification, NotificationAdditionError
    > {
        let content = Payload(root: addition.content)
        let display = Display(alert: content.aps.alert, strings: strings)
        // iOS refuses a request with nothing to read (UNErrorCodeNotificationInvalidNoContent).
        guard display.hasText else { return .failure(.notificationInvalidNoContent) }
        // The trigger as the app made it: a repeating calendar one's firings are the host's to keep, beside it.
        let made = addition.trigger.map { trigger in
            var made = trigger
            made.firings = nil
            return made
        }
        var notification = LocalNotification(
            identifier: addition.identifier, title: display.title, subtitle: display.subtitle, body: display.body,
            threadIdentifier: content.aps.threadID ?? "", trigger: made)
        if addition.trigger == nil {
            notification.previewHidden = device.config.previewsHidden
        }
        var shown = NotificationCenterLog.Delivered(
            identifier: addition.identifier, date: now, notification: addition.content, title: display.title,
            subtitle: display.subtitle, body: display.body, local: [:])
        do throws(DeviceError) {
            guard let trigger = addition.trigger else {
                try device.notificationCenter.deliver(shown)
                // Its category's buttons and hidden-previews text, as a push's (no warning: the push's result is
                // about the push).
                let thread = content.aps.threadID ?? ""
                let presentation = CategoryPresentation.make(
                    notification: addition.content, display: display, previewHidden: notification.previewHidden,
                    device: device, strings: strings
                ) { CategoryPresentation.threadCount(thread, in: device) }
                notification.actions = presentation.actions
                notification.hiddenPreview = presentation.hiddenPreview
                return .success(notification)
            }
            // The framework makes no trigger without a date to fire at, and none that repeats more often than a
            // minute; an extension that is not built on it gets the error instead.
            guard trigger.fireAt > 0 else { return .failure(.notificationInvalidNoDate) }
            var every: Int64?
            var firings: [Int64]?
            switch trigger.kind {
            case .timeInterval:
                guard let seconds = trigger.seconds,
                    NotificationAddition.Trigger.intervalProblem(seconds: seconds, repeats: trigger.repeats) == nil
                else {
                    return .failure(.notificationInvalidNoDate)
                }
                if trigger.repeats {
                    // An interval past Int64's milliseconds (2.9 × 10⁸ years) fires no more than once: refused.
                    guard let milliseconds = Int64(exactly: (seconds * 1000).rounded()) else {
                        return .failure(.notificationInvalidNoDate)
                    }
                    every = milliseconds
                }
            case .calendar:
                guard trigger.dateComponents != nil else { return .failure(.notificationInvalidNoDate) }
                // A repeating one fires at the firings the framework worked out; one added without them is kept
                // pending and never fires.
                if trigger.repeats, let times = trigger.firings {
                    guard NotificationAddition.Trigger.firingsAreValid(times, first: trigger.fireAt) else {
                        return .failure(.notificationInvalidNoDate)
                    }
                    firings = times
                }
            }
            shown.date = trigger.fireAt
            shown.local = ["trigger": made?.json ?? .null]
            try device.notificationCenter.schedule(
                NotificationCenterLog.Scheduled(
                    notification: shown, every: every, firings: firings,
                    fires: !(trigger.kind == .calendar && trigger.repeats && firings == nil)))
            return .success(notification)
        } catch {
            // The device's Notification Center cannot be written: refused, as a system that cannot keep it.
            return .failure(.notificationsNotAllowed)
        }
    }
}
