import NSECrypto
public import NSEDevice
import NSEJSON
public import NSEPayload
public import NSEProtocol
import NSESystem

/// "iOS": decides whether the extension runs, runs it (a fresh process, or a warm one kept for the device) under the
/// budget and memory limit, and applies Apple's content rules to what comes back.
public struct NotificationHost: Sendable {
    public var device: Device
    public var limits: ExtensionLimits
    /// The extension program and its arguments.
    public var extensionCommand: [String]
    /// What iOS 26.4 tells the app with a PushKit push (`PKVoIPPushMetadata.mustReport`): false lets the app
    /// decline to report this push without a strike (`nse run --must-report false`).
    public var voipMustReport = true
    /// Asks the extension to record its SIP exchange into `info.sip_exchange` (`nse serve --record`); nil: not.
    public var recordSIP: SIPRecordingMode? = nil
    /// Where warm extension processes are kept between pushes (`--extension-process warm`); nil: a fresh process
    /// for every push.
    public var extensionProcesses: ExtensionProcessPool?
    /// Fresh extension processes forked by the extension's fork server (`--extension-launch fork`); nil: each one
    /// exec'd.
    public var extensionForkServers: ExtensionForkServers?

    public init(device: Device, limits: ExtensionLimits = ExtensionLimits(), extensionCommand: [String]) {
        self.device = device
        self.limits = limits
        self.extensionCommand = extensionCommand
    }

    /// The limits in force. A reference extension built with a sanitizer (`make test-asan`, `make test-tsan`) carries
    /// its shadow memory in its RSS (27 MB under ASan, 44 MB under TSan, against 7–12 MB): those runs set
    /// `NSE_SANITIZER_MEMORY_FACTOR` and the reference extension's memory limit is multiplied by it. Other extensions
    /// (not built by this package) keep the limit as given, and without the variable nothing changes.
    /// The device's release adds its own rules: below iOS 12, a fresh process has 1 s to answer; unless a memory limit
    /// was given, the device's release and model set it (12, 16 or 24 MB).
    func limitsForThisRun() -> ExtensionLimits {
        var limits = limits
        limits.startTime = limits.startTime ?? device.config.iosVersion.extensionStartLimit
        if limits.memoryLimitFollowsDevice {
            limits.memoryLimitKilobytes = device.config.iosVersion.extensionMemoryLimitKilobytes(
                on: device.config.model)
        }
        guard let factor = Environment.get("NSE_SANITIZER_MEMORY_FACTOR").flatMap(Double.init), factor > 1,
            Self.isReferenceExtension(extensionCommand)
        else { return limits }
        limits.memoryLimitKilobytes = Int(Double(limits.memoryLimitKilobytes) * min(factor, 8))
        return limits
    }

    /// The reference extension: `$NSE_EXTENSION`, else `nse-extension` beside the running executable,
    /// else `nse-extension` on `PATH`.
    public static func referenceExtensionCommand() -> [String] {
        ChildProcess.sibling("nse-extension", overriddenBy: "NSE_EXTENSION")
    }

    /// Why the reference extension cannot run, or nil when it can: `nse-extension` must sit beside the running
    /// executable (or `$NSE_EXTENSION` name it). Checked before any push, so a half-installed nse fails instead of
    /// showing every push's original alert.
    public static func referenceExtensionProblem() -> String? {
        let command = referenceExtensionCommand()
        let path = command[0]
        if path.contains("/") {
            return FileSystem.isExecutable(path) ? nil : "the reference extension \(path) is missing or not executable"
        }
        // Not beside nse: found on PATH, if at all.
        let found = (Environment.get("PATH") ?? "").split(separator: ":").contains {
            FileSystem.isExecutable(Path.join(String($0), path))
        }
        return found
            ? nil
            : "the reference extension nse-extension is not beside \(FileSystem.executablePath() ?? "nse") nor on PATH (install nse with its four binaries together, or set NSE_EXTENSION)"
    }

    /// Whether `command` runs the reference extension, however its path is spelled (a folder reached through a
    /// symbolic link, as `.build/debug` is, names the same file).
    static func isReferenceExtension(_ command: [String]) -> Bool {
        let reference = referenceExtensionCommand()
        if command == reference { return true }
        guard command.count == 1, reference.count == 1, let path = FileSystem.resolvedPath(command[0]) else {
            return false
        }
        return path == FileSystem.resolvedPath(reference[0])
    }

    /// A user's extension command line, run through `/bin/sh` with `exec` so the measured process is theirs.
    public static func shellCommand(_ commandLine: String) -> [String] {
        ChildProcess.shellCommand(commandLine)
    }

    /// Takes one push from intake to the host's verdict.
    ///
    /// A host that records results durably (`nse serve`) passes `keepContent`: what an extension hands over with
    /// its content is kept by it (`true` once on disk) before the extension hears `content-accepted` and lets go of
    /// the messages it took from the App Group store. When such a host stopped after keeping a push's handover and
    /// before its result, it passes that back as `keptContent`: the push is judged on it (the app launched with the
    /// call offer it carries, if any) and no extension runs again. A push's `apns-collapse-id` is the notification's
    /// identifier, as on iOS (`UNNotificationRequest.identifier`).
    public func deliver(
        _ bytes: [UInt8], pushType: PushType, source: PayloadSource, collapseID: String? = nil,
        keptContent: ExtensionHandover? = nil, keepContent: (@Sendable (ExtensionHandover) -> Bool)? = nil
    ) -> NotificationResult {
        var timings = Timings()
        let requestID = (try? SecureRandom.uuid()) ?? "00000000-0000-4000-8000-000000000000"
        let payload: Payload
        do {
            payload = try Intake.accept(bytes, pushType: pushType, source: source, bundleID: device.config.bundleID)
        } catch {
            timings.mark(.intake)
            return .rejected(error, requestID: requestID, pushType: pushType, timings: timings.closed())
        }
        timings.mark(.intake)
        let (strings, stringProblems) = device.strings()
        var result = decide(
            payload, pushType: pushType, requestID: requestID, strings: strings,
            content: Delivery(collapseID: collapseID, kept: keptContent, keep: keepContent), pushStart: timings.start)
        result.warnings = payload.warnings + stringProblems + result.warnings
        if let display = result.display, let notification = result.notification {
            result.warnings += InterruptionEntitlements.warnings(for: notification, device: device.config)
            result.previewHidden = device.config.previewsHidden
            // In Notification Center until removed, as `UNUserNotificationCenter` lists it.
            let delivered = NotificationCenterLog.Delivered(
                identifier: collapseID ?? requestID, date: SystemClock.unixMilliseconds(), notification: notification,
                title: display.title, subtitle: display.subtitle, body: display.body)
            do { try device.notificationCenter.deliver(delivered) } catch {
                result.warnings.append("Notification Center not updated: \(error.description)")
            }
            let thread = notification["aps"]?["thread-id"]?.stringValue ?? ""
            let presentation = CategoryPresentation.make(
                notification: notification, display: display, previewHidden: result.previewHidden, device: device,
                strings: strings
            ) { [device] in CategoryPresentation.threadCount(thread, in: device) }
            result.actions = presentation.actions
            result.hiddenPreview = presentation.hiddenPreview
            result.warnings += presentation.warnings
        }
        if let report = result.extensionReport {
            timings.record(.extension, milliseconds: report.wallMilliseconds)
            // Kept on iOS (property-list values); the keys, never the values.
            if let keys = report.info?["user_info_not_json"]?.arrayValue?.compactMap(\.stringValue), !keys.isEmpty {
                result.warnings.append(
                    "userInfo keys left out, having no JSON form (a Data, Date or object value, a key not a string): "
                        + keys.joined(separator: ", "))
            }
        }
        result.timings = timings.closed()
        log(result)
        return result
    }

    /// What ``deliver(_:pushType:source:collapseID:keptContent:keepContent:)`` was given beside the payload.
    private struct Delivery {
        var collapseID: String?
        var kept: ExtensionHandover?
        var keep: (@Sendable (ExtensionHandover) -> Bool)?
    }

    private func decide(
        _ payload: Payload, pushType: PushType, requestID: String, strings: StringsTable, content: Delivery,
        pushStart: UInt64
    ) -> NotificationResult {
        let original = Display(alert: payload.aps.alert, strings: strings)
        func notInvoked(_ reason: String, shown: Bool) -> NotificationResult {
            NotificationResult(
                outcome: .notInvoked, reason: reason, requestID: requestID, pushType: pushType,
                notification: shown ? payload.root : nil, display: shown ? original : nil)
        }
        switch pushType {
        case .background:
            return notInvoked(
                ReasonCode.backgroundPush.reason("delivered to the app, no alert, the extension is not run"),
                shown: false)
        case .voip:
            // PushKit: no extension; iOS launches the app, which must report the call, then takes it.
            let launchedAt = SystemClock.monotonicNanoseconds()
            let launch = AppLauncher(device: device).launch(payload.root, mustReport: voipMustReport)
            var result = notInvoked(
                ReasonCode.voipPush.reason("delivered to the app through PushKit; \(launch.summary)"), shown: false)
            result.callReport = launch.report
            result.voip = .pushKit(launch)
            followCall(launch, payload: payload.root, route: .pushKit, at: launchedAt, since: pushStart, into: &result)
            return result
        case .liveactivity:
            // ActivityKit's: `nse serve` applies it to the device's Live Activity (NSEAPNsServer/LiveActivities).
            return notInvoked(
                ReasonCode.liveActivityPush.reason("delivered to the app's Live Activity, the extension is not run"),
                shown: false)
        case .alert:
            break
        }
        if case .none = payload.aps.alert {
            if payload.aps.contentAvailable {
                return notInvoked(
                    ReasonCode.contentAvailableOnly.reason("a background push, the extension is not run"), shown: false)
            }
            return notInvoked(
                ReasonCode.noAlert.reason("a badge/sound-only push never reaches the extension"), shown: false)
        }
        guard original.hasText else {
            return notInvoked(
                ReasonCode.noVisibleText.reason("nothing to show, the extension is not run"), shown: false)
        }
        guard payload.aps.mutableContent else {
            return notInvoked(ReasonCode.mutableContentNotSet.reason("iOS shows the alert as sent"), shown: true)
        }
        return runExtension(
            payload, pushType: pushType, requestID: requestID, strings: strings, original: original, content: content,
            pushStart: pushStart)
    }

    /// The app takes the call it reported, when the push named its SIP Call-ID and the device has an account.
    /// Sets `result.call` when the app follows the call it reported; an app that did not end its CallKit call is
    /// also a warning.
    private func followCall(
        _ launch: AppLaunch, payload: JSONObject, route: CallRecord.Route, at launchedAt: UInt64,
        since pushStart: UInt64, into result: inout NotificationResult
    ) {
        let app = AppCall(device: device)
        guard let callID = app.follows(launch, payload: payload) else { return }
        var record = app.follow(
            callID: callID, route: route, launch: launch, launchedAt: launchedAt, pushStart: pushStart)
        if launch.handlerVersion == 2, let uuid = launch.report?.uuid {
            // Version 2: the app is told how the call ended and must end the CallKit call it reported.
            let end = AppLauncher(device: device).endCall(record, uuid: uuid)
            record.callKit = end
            if let failure = end.failure { result.warnings.append(failure) }
        }
        result.call = record
    }

    private func runExtension(
        _ payload: Payload, pushType: PushType, requestID: String, strings: StringsTable, original: Display,
        content: Delivery, pushStart: UInt64
    ) -> NotificationResult {
        let budgetMilliseconds = Int64(limits.budget * 1000)
        var request = ServiceRequest(
            requestID: requestID, identifier: content.collapseID, pushType: pushType, payload: payload.root,
            container: device.directory,
            budgetMilliseconds: budgetMilliseconds,
            deadlineUnixMilliseconds: SystemClock.unixMilliseconds() + budgetMilliseconds)
        request.recordSIP = recordSIP
        let filtering = device.config.filtering
        let limits = limitsForThisRun()
        let run =
            content.kept.map(ExtensionRun.resumed)
            ?? ExtensionLauncher(
                command: extensionCommand, limits: limits, filteringEntitlement: filtering,
                release: device.config.iosVersion, pool: extensionProcesses, forkServers: extensionForkServers
            ).run(
                request, keepContent: content.keep,
                notifications: LocalNotificationPoster(device: device, strings: strings))
        // A call offer the host accepted launches the app, which must report the call, then takes it.
        let launchedAt = SystemClock.monotonicNanoseconds()
        let app = run.record.acceptedVoIPPayload.map { AppLauncher(device: device).launch($0) }
        let verdict = ContentRules.verdict(
            run, app: app, original: payload, originalDisplay: original, strings: strings, filtering: filtering,
            limits: limits)
        return result(
            verdict, run: run, app: app, launchedAt: launchedAt, requestID: requestID, pushType: pushType,
            pushStart: pushStart)
    }

    /// The result of a push the extension ran for, made once from the verdict, the run and the app's launch (nil
    /// unless the host accepted a call offer), launched at `launchedAt`.
    private func result(
        _ verdict: ContentRules.Verdict, run: ExtensionRun, app: AppLaunch?, launchedAt: UInt64, requestID: String,
        pushType: PushType, pushStart: UInt64
    ) -> NotificationResult {
        var result = NotificationResult(
            outcome: verdict.outcome, reason: verdict.reason, requestID: requestID, pushType: pushType,
            notification: verdict.notification, display: verdict.display, warnings: verdict.warnings)
        result.callReport = app?.report
        // What the shown content carries beside its text: files, and a communication notification's sender.
        if let delivered = run.record.delivered, result.display != nil {
            let store = AttachmentStore(device: device, requestID: requestID)
            result.attachments = store.take(delivered.attachments, warnings: &result.warnings).map(\.json)
            result.communication = CommunicationRecord.record(
                delivered.communication, device: device, store: store, warnings: &result.warnings)
        }
        // The SDK's scratch files of this request (avatars written for the host): what was kept has been moved out.
        try? FileSystem.removeTree(Path.join(device.directory, "tmp", "extension", requestID))
        if let app, let offer = run.record.acceptedVoIPPayload {
            followCall(
                app, payload: offer, route: .notificationServiceExtension, at: launchedAt, since: pushStart,
                into: &result)
        }
        if run.record.voipReported {
            result.voip = .notificationServiceExtension(
                error: run.record.voipError, framework: run.record.voipFramework, app: app)
        }
        result.localNotifications = run.record.localNotifications
        result.extensionReport = NotificationResult.ExtensionReport(run, command: extensionCommand)
        return result
    }

    /// One line per notification in the container's host log: no content, no reasons (they may quote a
    /// user's extension), only what happened and how long it took.
    private func log(_ result: NotificationResult) {
        var line: JSONObject = [
            "at": .int(SystemClock.unixMilliseconds()), "request_id": .string(result.requestID),
            "push_type": .string(result.pushType.rawValue), "outcome": .string(result.outcome.rawValue),
        ]
        if let report = result.extensionReport {
            line["wall_ms"] = .double(NotificationResult.rounded(report.wallMilliseconds))
            line["peak_rss_kb"] = JSON.int(report.peakRSSKilobytes)
            line["killed"] = JSON.string(report.killed)
        }
        try? FileSystem.append(
            Path.join(device.logsDirectory, "host.jsonl"), JSON.object(line).serializedBytes() + [0x0A])
    }
}
