import NSEJSON
import NSEPayload
import NSEProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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

    /// What a trap that wrote nothing on stderr usually is, for the reason: the Swift runtime prints its fatal
    /// errors and Apple's shims in nse print theirs, so a silent SIGILL or SIGTRAP leaves a user nothing to go on.
    static func trapHint(signal: Int32, stderr: String) -> String {
        guard signal == SIGILL || signal == SIGTRAP, stderr.allSatisfy(\.isWhitespace) else { return "" }
        return
            " (a trap with nothing on stderr: a check compiled without its message, such as a precondition in an"
            + " optimized build, or libdispatch refusing a misuse, such as DispatchQueue.main.sync on the main queue)"
    }

    /// The verdict on `run`. `app` is the app's launch for the call offer the host accepted from the extension (it
    /// is launched before the verdict): nothing shown because of it is an escalation, not an empty content.
    static func verdict(
        _ run: ExtensionRun, app: AppLaunch?, original: Payload, originalDisplay: Display, strings: StringsTable,
        filtering: Bool, limits: ExtensionLimits
    ) -> Verdict {
        let record = run.record
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
            let how =
                run.exitSignal.map { "was killed by signal \($0)\(trapHint(signal: $0, stderr: run.stderrTail))" }
                ?? "exited with status \(run.exitCode ?? -1)"
            return showOriginal(
                ReasonCode.extensionCrashed.reason(
                    "the extension \(how) without calling the content handler; iOS shows the original"))
        }
        let content = Payload(root: delivered.content)
        let display = Display(alert: content.aps.alert, strings: strings)
        guard display.hasText else {
            if filtering {
                let warnings = content.aps.badge.map { ["badge set to \($0) without an alert"] } ?? []
                if let app {
                    // The call offer went to the app, which must report the call: no notification is shown for it.
                    return Verdict(
                        outcome: .suppressed,
                        reason: ReasonCode.voipEscalated.reason(
                            "the call offer went to the call-report path; \(app.summary)"),
                        warnings: warnings)
                }
                return Verdict(
                    outcome: .suppressed,
                    reason:
                        ReasonCode.emptyContent.reason(
                            "the extension delivered no alert text and the app has the filtering entitlement; nothing is shown"
                        ),
                    warnings: warnings)
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
