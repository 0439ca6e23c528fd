import NSEJSON
import NSEPayload
import NSEProtocol

/// Apple's rules for what is shown once the extension has run.
enum ContentRules {
    /// What the user ends up with, and why: the host builds the result from it once.
    struct Verdict: Equatable {
        var outcome: NotificationResult.Outcome
        var reason: String
        /// The content shown (aps + user info), nil when nothing is.
        var notification: JSONObject?
        var display: Display?
        var warnings: [String] = []
    }

    static func verdict(
        _ record: ExtensionMachine.Record, exitCode: Int32?, exitSignal: Int32?, original: Payload,
        originalDisplay: Display, strings: StringsTable, filtering: Bool, limits: ExtensionLimits
    ) -> Verdict {
        func showOriginal(_ reason: String) -> Verdict {
            Verdict(outcome: .original, reason: reason, notification: original.root, display: originalDisplay)
        }
        switch record.termination {
        case .spawnFailed(let message):
            return showOriginal(ReasonCode.extensionNotStarted.reason("\(message)"))
        case .memory(let footprint):
            return showOriginal(
                ReasonCode.memoryLimit.reason(
                    "the extension's footprint reached \(footprint) KB, over the \(limits.memoryLimitKilobytes) KB limit; iOS kills it and shows the original"
                )
            )
        case .protocolViolation(let message):
            return showOriginal(ReasonCode.extensionProtocolError.reason("\(message)"))
        case .budget:
            return showOriginal(
                ReasonCode.budgetExpired.reason(
                    "no content within \(limits.budget) s and \(limits.grace) s after serviceExtensionTimeWillExpire; iOS shows the original"
                )
            )
        case .slowStart:
            return showOriginal(
                ReasonCode.slowStart.reason(
                    "the extension did not answer within \(limits.startTime ?? 1) s of its start; iOS before 12 kills it and shows the original"
                )
            )
        case .exited:
            break
        }
        guard let delivered = record.delivered else {
            let how = exitSignal.map { "was killed by signal \($0)" } ?? "exited with status \(exitCode ?? -1)"
            return showOriginal(
                ReasonCode.extensionCrashed.reason(
                    "the extension \(how) without calling the content handler; iOS shows the original"))
        }
        let content = Payload(root: delivered.content)
        let display = Display(alert: content.aps.alert, strings: strings)
        guard display.hasText else {
            if filtering {
                return Verdict(
                    outcome: .suppressed,
                    reason:
                        ReasonCode.emptyContent.reason(
                            "the extension delivered no alert text and the app has the filtering entitlement; nothing is shown"
                        ),
                    warnings: content.aps.badge.map { ["badge set to \($0) without an alert"] } ?? [])
            }
            return showOriginal(
                ReasonCode.noAlertText.reason(
                    "the delivered content has no alert text; without the filtering entitlement iOS shows the original")
            )
        }
        let extensionReason = delivered.reason ?? (delivered.isFallback ? "fallback" : "rewritten")
        if record.deliveredAfterExpiry {
            return Verdict(
                outcome: .fallback,
                reason: ReasonCode.timeWillExpire.reason(
                    "best attempt delivered after the expiry notice (\(extensionReason))"),
                notification: delivered.content, display: display, warnings: content.warnings)
        }
        return Verdict(
            outcome: delivered.isFallback ? .fallback : .rewritten, reason: extensionReason,
            notification: delivered.content,
            display: display, warnings: content.warnings)
    }
}
