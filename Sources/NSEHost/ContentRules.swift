import NSEJSON
import NSEPayload

/// Apple's rules for what is shown once the extension has run.
enum ContentRules {
    static func verdict(
        run: ExtensionRun, original: Payload, originalDisplay: Display, strings: StringsTable, filtering: Bool,
        limits: ExtensionLimits
    ) -> NotificationResult {
        func showOriginal(_ reason: String) -> NotificationResult {
            NotificationResult(
                outcome: .original, reason: reason, requestID: "", pushType: .alert, notification: original.root,
                display: originalDisplay)
        }
        switch run.termination {
        case .spawnFailed(let message):
            return showOriginal("extension-not-started: \(message)")
        case .memory(let peak):
            return showOriginal(
                "memory-limit: the extension's peak RSS reached \(peak) KB, over the \(limits.memoryLimitKilobytes) KB limit; iOS kills it and shows the original")
        case .protocolViolation(let message):
            return showOriginal("extension-protocol-error: \(message)")
        case .budget:
            return showOriginal(
                "budget-expired: no content within \(limits.budget) s and \(limits.grace) s after serviceExtensionTimeWillExpire; iOS shows the original")
        case .exited:
            break
        }
        guard let delivered = run.delivered else {
            let how = run.exitSignal.map { "was killed by signal \($0)" } ?? "exited with status \(run.exitCode ?? -1)"
            return showOriginal("extension-crashed: the extension \(how) without calling the content handler; iOS shows the original")
        }
        let content = Payload(root: delivered.content)
        let display = Display(alert: content.aps.alert, strings: strings)
        guard display.hasText else {
            if filtering {
                var result = NotificationResult(
                    outcome: .suppressed,
                    reason: "empty-content: the extension delivered no alert text and the app has the filtering entitlement; nothing is shown",
                    requestID: "", pushType: .alert, notification: nil, display: nil)
                if let badge = content.aps.badge { result.warnings.append("badge set to \(badge) without an alert") }
                return result
            }
            return showOriginal(
                "no-alert-text: the delivered content has no alert text; without the filtering entitlement iOS shows the original")
        }
        let extensionReason = delivered.reason ?? (delivered.isFallback ? "fallback" : "rewritten")
        if run.deliveredAfterExpiry {
            return NotificationResult(
                outcome: .fallback, reason: "time-will-expire: best attempt delivered after the expiry notice (\(extensionReason))",
                requestID: "", pushType: .alert, notification: delivered.content, display: display,
                warnings: content.warnings)
        }
        return NotificationResult(
            outcome: delivered.isFallback ? .fallback : .rewritten, reason: extensionReason, requestID: "",
            pushType: .alert, notification: delivered.content, display: display, warnings: content.warnings)
    }
}
