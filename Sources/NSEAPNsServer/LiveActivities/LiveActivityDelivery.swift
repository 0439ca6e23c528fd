import Logging
import NSEDevice
import NSEHost
import NSEJSON
import NSEPayload
import NSESystem

/// The device's side of a `liveactivity` push: iOS hands it to ActivityKit, never to a Notification Service
/// Extension, so no process runs. The push is applied to the device's Live Activity state
/// (``LiveActivityState/receive(_:token:priority:budget:iosVersion:now:)``, under its file's lock) and judged as a
/// result: started, updated, ended, ignored or throttled. It runs where any push runs, on the delivery queue, after
/// APNs's part (held for an offline device, late in a low-priority burst, expired) is done.
public struct LiveActivityDelivery: Sendable {
    /// Priority-10 pushes an app's activities may take per hour (`--live-activity-budget`); nil: no limit.
    let budget: Int?
    let logger: Logger

    /// The default `--live-activity-budget`: Apple gives no number ("a budget… that depends on the system"), so
    /// this is nse's, low enough that a provider that sends every change at priority 10 meets it in a test.
    public static let defaultBudget = 10

    /// Applies `push` to its device's Live Activities; the result to record.
    func deliver(_ push: RecordedPush) -> NotificationResult {
        let accepted = push.record.push
        let started = SystemClock.monotonicNanoseconds()
        let payload: Payload
        do {
            payload = try Intake.accept(
                accepted.payload, pushType: .liveactivity, source: .webhook, bundleID: push.device.config.bundleID)
        } catch {
            return NotificationResult.rejected(
                error, requestID: accepted.apnsID, pushType: .liveactivity,
                intakeMilliseconds: SystemClock.millisecondsSince(started))
        }
        let intake = SystemClock.millisecondsSince(started)
        var result = judge(payload, push: push)
        let total = SystemClock.millisecondsSince(started)
        result.timings = [("intake", NotificationResult.rounded(intake)), ("total", NotificationResult.rounded(total))]
        return result
    }

    private func judge(_ payload: Payload, push: RecordedPush) -> NotificationResult {
        let accepted = push.record.push
        let device = push.device
        func result(_ outcome: NotificationResult.Outcome, _ reason: String) -> NotificationResult {
            NotificationResult(outcome: outcome, reason: reason, requestID: accepted.apnsID, pushType: .liveactivity)
        }
        let parsed: LiveActivityPush
        do { parsed = try LiveActivityPush(payload: .object(payload.root)) } catch {
            return result(.activityIgnored, ReasonCode.activityPayloadInvalid.reason(error.description))
        }
        let now = SystemClock.unixMilliseconds()
        let delivery: LiveActivityState.Delivery
        do {
            delivery = try device.liveActivities.update { state throws(DeviceError) in
                try state.receive(
                    parsed, token: accepted.token, priority: accepted.priority, budget: budget,
                    iosVersion: device.config.iosVersion, now: now)
            }
        } catch {
            logger.error(
                "live activity state not usable",
                metadata: ["apns.id": .string(accepted.apnsID), "device.folder": .string(device.directory)])
            return result(.activityIgnored, ReasonCode.containerUnavailable.reason(error.description))
        }
        var judged = result(Self.outcome(delivery.outcome), delivery.code.reason(delivery.detail))
        judged.liveActivity = delivery.activity?.json(at: now)
        switch delivery.outcome {
        case .started, .updated, .ended:
            // What ActivityKit got, and the alert it lights the screen with, if the push carried one.
            judged.notification = payload.root
            if let alert = parsed.alert {
                let display = Self.display(alert, strings: device.strings().table)
                if display.hasText { judged.display = display }
            }
        case .ignored, .throttled:
            break
        }
        return judged
    }

    static func outcome(_ outcome: LiveActivityState.Delivery.Outcome) -> NotificationResult.Outcome {
        switch outcome {
        case .started: .activityStarted
        case .updated: .activityUpdated
        case .ended: .activityEnded
        case .ignored: .activityIgnored
        case .throttled: .throttled
        }
    }

    /// An ActivityKit alert as the lock screen shows it: its `title` and `body` each a string, or a `loc-key` with
    /// `loc-args` looked up in the app's strings.
    static func display(_ alert: JSON, strings: StringsTable) -> Display {
        func text(_ value: JSON?) -> String {
            if let literal = value?.stringValue { return literal }
            guard let key = value?["loc-key"]?.stringValue else { return "" }
            let arguments = value?["loc-args"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return strings.localized(key, arguments: arguments)
        }
        if let body = alert.stringValue { return Display(body: body) }
        return Display(title: text(alert["title"]), body: text(alert["body"]))
    }
}
