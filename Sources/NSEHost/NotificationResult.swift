import NSEDevice
public import NSEJSON
public import NSEPayload
import NSEProtocol

/// The host's verdict on one notification: the same document whichever entry point was used (docs/result.md).
public struct NotificationResult: Sendable, JSONEncodable {
    /// What the user ends up with.
    public enum Outcome: String, Sendable {
        /// The extension's rewrite is shown.
        case rewritten
        /// The extension's fallback (or its best attempt after the expiry notice) is shown.
        case fallback
        /// iOS shows the payload's own alert (extension failed, or broke a content rule).
        case original
        /// Nothing is shown (empty content with the filtering entitlement).
        case suppressed
        /// The extension was not run (not a mutable-content alert); iOS shows the payload as it is, or nothing.
        case notInvoked = "not-invoked"
        /// APNs or intake refused the payload.
        case rejected
        /// APNs accepted the push but dropped it undelivered: its `apns-expiration` had passed (`nse serve`).
        case expired
        /// APNs accepted the push for an offline device and dropped it undelivered when a newer push for the same
        /// app (topic) came: it keeps only the newest one (`nse serve`, docs/serve.md).
        case replaced
        /// APNs accepted a low-priority push for an offline device and dropped it undelivered, as its storage may
        /// (`nse serve`, a device whose store is `apple`).
        case dropped
        /// A Live Activity push started an activity (`nse serve`, docs/serve.md "Live Activities").
        case activityStarted = "activity-started"
        /// A Live Activity push changed what its activity shows.
        case activityUpdated = "activity-updated"
        /// A Live Activity push ended its activity.
        case activityEnded = "activity-ended"
        /// ActivityKit ignored the Live Activity push: out of order, for an activity no longer active, or unusable.
        case activityIgnored = "activity-ignored"
        /// A priority-10 Live Activity update past its budget: the system throttled it.
        case throttled
    }

    /// Measurements of the extension process.
    public struct ExtensionReport: Sendable {
        public var command: [String]
        public var wallMilliseconds: Double
        /// Peak resident memory of the extension's own address space (VmHWM), in KB.
        public var peakRSSKilobytes: Int?
        /// Peak footprint (private dirty and swapped memory, what iOS's limit counts), in KB; nil where the kernel
        /// cannot tell it, or when the process was never sampled.
        public var peakFootprintKilobytes: Int? = nil
        /// `ru_maxrss` from wait4: on Linux it includes the spawning host's own high-water mark.
        public var wait4MaxRSSKilobytes: Int?
        public var exitCode: Int32?
        public var exitSignal: Int32?
        /// "budget", "memory", "protocol", "spawn", "start" or nil when it ended on its own.
        public var killed: String?
        public var timeWillExpireSent: Bool
        public var stderr: String
        public var info: JSONObject?
        /// Which process served the push; nil for a push judged on content kept before a restart (no process ran).
        public var process: ProcessUse?

        /// A fresh process, or a warm one that served earlier pushes (`--extension-process warm`).
        public struct ProcessUse: Sendable, Equatable {
            /// It had served an earlier push.
            public var warm: Bool
            /// The requests it has been sent, this one included.
            public var pushes: Int
            /// It stays, idle, for the next push.
            public var kept: Bool
        }
    }

    /// The path a call offer took (`voip`): PushKit, or the extension's `reportNewIncomingVoIPPushPayload`.
    public enum VoIPPath: Sendable, Equatable, JSONEncodable {
        /// A VoIP push: no extension, iOS launched the app.
        case pushKit(AppLaunch)
        /// The extension reported a call through `framework`: the error (nil when it was accepted), and the app's
        /// launch when it was.
        case notificationServiceExtension(error: VoIPReportFailure?, framework: VoIPFramework, app: AppLaunch?)

        /// `{"path": "pushkit", "app"}` (with `framework` when the app reported), or `{"path":
        /// "notification-service-extension", "framework", "error"}` with `app` when the app was launched.
        public var json: JSON {
            switch self {
            case .pushKit(let app):
                var object: JSONObject = ["path": "pushkit", "app": app.json]
                if let report = app.report { object["framework"] = .string(report.framework.rawValue) }
                return .object(object)
            case .notificationServiceExtension(let error, let framework, let app):
                var object: JSONObject = [
                    "path": "notification-service-extension", "framework": .string(framework.rawValue),
                    "error": error.json,
                ]
                if let app { object["app"] = app.json }
                return .object(object)
            }
        }
    }

    public var outcome: Outcome
    public var reason: String
    public var requestID: String
    public var pushType: PushType
    /// The content as delivered to the lock screen (aps + user info), nil when nothing is shown.
    public var notification: JSONObject?
    /// What the user reads, nil when nothing is shown.
    public var display: Display?
    /// The call the app reported to CallKit (VoIP path): `call_report`, `null` when there is none.
    public var callReport: CallReport?
    /// How the VoIP path went: `voip`, absent when the push took none.
    public var voip: VoIPPath?
    /// The call the app took after reporting it (`call`), absent when it took none.
    public var call: CallRecord?
    public var extensionReport: ExtensionReport?
    public var warnings: [String] = []
    /// The files shown with the notification, in the device's attachment store (`UNNotificationAttachment`).
    public var attachments: [JSON] = []
    /// A communication notification's sender and conversation (`updating(from:)`), when the app may show one.
    public var communication: JSON?
    /// The lock screen shows only the app and "Notification" for it: Show Previews is `never`, or `when-unlocked` with
    /// the phone locked (`preview_hidden`, absent when shown).
    public var previewHidden = false
    /// What the lock screen shows in place of the content when ``previewHidden``: "Notification", or the category's
    /// placeholder, with its title and subtitle when the category keeps them (`hidden_preview`).
    public var hiddenPreview: JSONObject?
    /// The buttons of the notification's category, as its expanded view shows them (`actions`, absent when none).
    public var actions: [JSON] = []
    /// The local notifications the extension added (`local_notifications`, absent when none): shown at once or
    /// scheduled, beside whatever the push itself shows.
    public var localNotifications: [LocalNotification] = []
    /// The Live Activity a `liveactivity` push reached, as it is after the push (`live_activity`; docs/result.md).
    public var liveActivity: JSON?
    public var timings: [(String, Double)] = []
    /// For rejections: APNs's reason string.
    public var rejectionReason: String?

    public init(
        outcome: Outcome, reason: String, requestID: String, pushType: PushType, notification: JSONObject? = nil,
        display: Display? = nil, warnings: [String] = []
    ) {
        self.warnings = warnings
        self.outcome = outcome
        self.reason = reason
        self.requestID = requestID
        self.pushType = pushType
        self.notification = notification
        self.display = display
    }

    /// Whether a device could show this outcome (exit status 0) rather than a refusal (65).
    public var isRejected: Bool { outcome == .rejected }

    /// The documented JSON form.
    public var json: JSON {
        var object: JSONObject = [
            "outcome": .string(outcome.rawValue),
            "reason": .string(reason),
            "request_id": .string(requestID),
            "push_type": .string(pushType.rawValue),
        ]
        if let rejectionReason { object["apns_reason"] = .string(rejectionReason) }
        object["notification"] = notification.map(JSON.object) ?? .null
        object["display"] =
            display.map { ["title": .string($0.title), "subtitle": .string($0.subtitle), "body": .string($0.body)] }
            ?? .null
        object["call_report"] = callReport.json
        if !attachments.isEmpty { object["attachments"] = .array(attachments) }
        if let communication { object["communication"] = communication }
        if previewHidden { object["preview_hidden"] = true }
        if let hiddenPreview { object["hidden_preview"] = .object(hiddenPreview) }
        if !actions.isEmpty { object["actions"] = .array(actions) }
        if !localNotifications.isEmpty { object["local_notifications"] = .array(localNotifications.map(\.json)) }
        if let liveActivity { object["live_activity"] = liveActivity }
        if let voip { object["voip"] = voip.json }
        if let call { object["call"] = call.json }
        if let report = extensionReport {
            var exit: JSONObject = [:]
            if let code = report.exitCode { exit["code"] = .int(Int64(code)) }
            if let signal = report.exitSignal { exit["signal"] = .int(Int64(signal)) }
            var extensionObject: JSONObject = [
                "command": .array(report.command.map(JSON.string)),
                "wall_ms": .double(NotificationResult.rounded(report.wallMilliseconds)),
                "peak_rss_kb": JSON.int(report.peakRSSKilobytes),
                "peak_footprint_kb": JSON.int(report.peakFootprintKilobytes),
                "wait4_maxrss_kb": JSON.int(report.wait4MaxRSSKilobytes),
                "exit": .object(exit),
                "killed": JSON.string(report.killed),
                "time_will_expire_sent": .bool(report.timeWillExpireSent),
            ]
            if let info = report.info { extensionObject["info"] = .object(info) }
            if let process = report.process {
                extensionObject["process"] = .string(process.warm ? "warm" : "fresh")
                extensionObject["process_pushes"] = .int(Int64(process.pushes))
                extensionObject["process_kept"] = .bool(process.kept)
            }
            if !report.stderr.isEmpty { extensionObject["stderr"] = .string(report.stderr) }
            object["extension"] = .object(extensionObject)
            // Who sent it, as the extension could tell (signed envelopes: docs/envelope.md).
            if let sender = report.info?["sender"] { object["sender"] = sender }
        } else {
            object["extension"] = .null
        }
        object["warnings"] = .array(warnings.map(JSON.string))
        object["timings_ms"] = .object(
            JSONObject(timings.map { (key: $0.0, value: JSON.double(NotificationResult.rounded($0.1))) }))
        return .object(object)
    }

    /// A measurement as results carry it: milliseconds to the microsecond.
    public static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }

    /// A rejection by intake (or by `nse run` itself, for a payload it would not read in full): no extension ran.
    public static func rejected(
        _ rejection: PayloadRejection, requestID: String, pushType: PushType, intakeMilliseconds: Double
    ) -> NotificationResult {
        rejected(
            rejection, requestID: requestID, pushType: pushType,
            timings: [("intake", intakeMilliseconds), ("total", intakeMilliseconds)])
    }

    /// A rejection by the host's intake, with the host's ``Timings``.
    static func rejected(
        _ rejection: PayloadRejection, requestID: String, pushType: PushType, timings: [(String, Double)]
    ) -> NotificationResult {
        var result = NotificationResult(
            outcome: .rejected, reason: rejection.description, requestID: requestID, pushType: pushType)
        result.rejectionReason = rejection.reason.rawValue
        result.timings = timings
        return result
    }

    /// A short human-readable form (`--format text`): one `name: value` line per field, every value passed through
    /// ``terminalSafe(_:)`` so that a sender's text can neither drive the terminal nor forge a line.
    public var text: String {
        let safe = NotificationResult.terminalSafe
        var lines = ["outcome:  \(outcome.rawValue)", "reason:   \(safe(reason))"]
        if let display {
            lines.append("title:    \(safe(display.title))")
            if !display.subtitle.isEmpty { lines.append("subtitle: \(safe(display.subtitle))") }
            lines.append("body:     \(safe(display.body))")
            // What else the lock screen shows: the sender's name and avatar, the pictures, the app icon's badge.
            if let sender = communication?["sender_name"]?.stringValue ?? communication?["sender_handle"]?.stringValue {
                let avatar = communication?["has_avatar"] == .bool(true) ? ", with an avatar" : ""
                let group = communication?["group_name"]?.stringValue.map { " in \(safe($0))" } ?? ""
                lines.append("sender:   \(safe(sender))\(group)\(avatar)")
            }
            for attachment in attachments {
                let type = attachment["type"]?.stringValue ?? "?"
                let size = attachment["size"]?.intValue.map { " \($0) bytes" } ?? ""
                lines.append("attached: \(safe(attachment["identifier"]?.stringValue ?? "")) (\(safe(type))\(size))")
            }
            if let badge = notification?["aps"]?["badge"]?.intValue { lines.append("badge:    \(badge)") }
            if previewHidden {
                let shown = hiddenPreview?["body"]?.stringValue ?? NotificationPreviews.placeholder
                lines.append("preview:  hidden (the lock screen shows \"\(safe(shown))\")")
            }
            for action in actions {
                let options = (action["options"]?.arrayValue ?? []).compactMap(\.stringValue)
                let parts = options + (action["text_input"] != nil ? ["text input"] : [])
                let flags = parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"
                lines.append("action:   \(safe(action["title"]?.stringValue ?? ""))\(flags)")
            }
        } else {
            lines.append("display:  (nothing shown)")
        }
        if let report = extensionReport {
            var exit = report.exitCode.map { "exit \($0)" } ?? report.exitSignal.map { "signal \($0)" } ?? "not run"
            if let killed = report.killed { exit += ", killed (\(killed))" }
            func megabytes(_ kilobytes: Int?) -> String {
                kilobytes.map { "\($0 / 1024).\($0 % 1024 * 10 / 1024) MB" } ?? "?"
            }
            lines.append(
                "extension: \(NotificationResult.rounded(report.wallMilliseconds)) ms, footprint "
                    + "\(megabytes(report.peakFootprintKilobytes)), peak RSS \(megabytes(report.peakRSSKilobytes)), \(exit)"
            )
        }
        for local in localNotifications {
            let when = local.trigger.map { " (scheduled, \($0.kind.rawValue)\($0.repeats ? ", repeating" : ""))" } ?? ""
            let text = [local.title, local.subtitle, local.body].filter { !$0.isEmpty }.joined(separator: " / ")
            lines.append("local:    \(safe(text))\(when)")
        }
        if let call = callReport {
            let caller = call.localizedCallerName ?? call.handleValue
            lines.append("call:     \(safe(caller)) rings (\(call.framework.rawValue) uuid \(safe(call.uuid)))")
        }
        for warning in warnings { lines.append("warning:  \(safe(warning))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` as it may be written to a terminal: a backslash becomes `\\`, newline, carriage return and tab become
    /// `\n`, `\r`, `\t`, and every other control character (C0, DEL, C1), the line and paragraph separators
    /// (U+2028, U+2029) and the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069) become
    /// `\u{XX}` with their code point in hex, as in a Swift string literal. Everything else is kept as it is.
    public static func terminalSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where needsEscape(scalar): escaped += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x5C, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

extension NotificationResult.ExtensionReport {
    /// The result's `extension` for `run` of `command`.
    init(_ run: ExtensionRun, command: [String]) {
        self.init(
            command: command, wallMilliseconds: run.wallMilliseconds, peakRSSKilobytes: run.record.peakKilobytes,
            peakFootprintKilobytes: run.record.peakFootprintKilobytes, wait4MaxRSSKilobytes: run.wait4MaxRSSKilobytes,
            exitCode: run.exitCode, exitSignal: run.exitSignal, killed: Self.killed(run.record.termination),
            timeWillExpireSent: run.record.expirySent, stderr: run.stderrTail, info: run.record.delivered?.info,
            process: run.process)
    }

    /// `killed`: why the host killed it, nil when it ended on its own (or was ended after delivering).
    private static func killed(_ termination: ExtensionMachine.Record.Termination) -> String? {
        switch termination {
        case .exited: nil
        case .budget: "budget"
        case .memory: "memory"
        case .spawnFailed: "spawn"
        case .protocolViolation: "protocol"
        case .slowStart: "start"
        }
    }
}
