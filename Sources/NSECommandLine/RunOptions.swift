import NSECrypto
public import NSEDevice
public import NSEHost
import NSEJSON
public import NSEPayload
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `nse run` as one call: its options, the host's verdict printed on stdout, and the exit status.
///
/// Both front doors build it after their own parsing: the small `nse` executable parses the common options by
/// hand (no argument-parsing library, no servers linked: it starts in a few milliseconds), `nse-tool`'s full
/// command line with swift-argument-parser (help, explanations); both read the ranges from ``RunLimits``.
public struct RunOptions: Sendable, Equatable {
    public enum Format: String, Sendable { case json, text }

    public var device: String?
    /// The payloads, delivered in order (none: one from stdin); `-` is stdin.
    public var payloads: [String] = []
    public var pushType: PushType = .alert
    public var budget: Double = RunLimits.budget.defaultValue
    public var grace: Double = RunLimits.grace.defaultValue
    /// Nil: the device's (its iOS release and model).
    public var memoryLimitMegabytes: Double?
    public var extensionCommand: String?
    public var format: Format = .json
    /// For this run, what the user does with a call the push brings (`--call-action`), instead of the device's.
    public var callAction: CallSettings.Action?
    /// What iOS 26.4 tells the app with a PushKit push (`PKVoIPPushMetadata.mustReport`; `--must-report`).
    public var mustReport = true
    /// A fresh extension process for every push, or one kept warm between the pushes of a sequence
    /// (`--extension-process`), evicted after `warmIdle` seconds idle (`--warm-idle`).
    public var extensionProcess = ExtensionProcessPool.Mode.fresh
    public var warmIdle = RunLimits.warmIdle.defaultValue
    /// Fresh processes exec'd or forked by the extension's fork server (`--extension-launch`).
    public var extensionLaunch = ExtensionForkServers.Launch.exec

    public init() {}

    /// Delivers the payload and prints the result (JSON, or text); errors are one line on stderr.
    ///
    /// A device that cannot be used (no device, an unreadable or corrupt `device.json`, a private key or SIP
    /// password that is missing, unreadable, corrupt or readable by others) is a configuration error, 78, found
    /// before anything is delivered: nothing is run and no result printed, so a CI run cannot pass on a broken
    /// setup. A payload that is refused (over 1 MiB included) prints its `rejected` result and exits 65.
    public func execute() -> ExitStatus {
        func fail(_ status: ExitStatus, _ message: String) -> ExitStatus {
            StandardStreams.writeError("nse: \(NotificationResult.terminalSafe(message))\n")
            return status
        }
        var device: Device
        do throws(DeviceError) {
            if let path = self.device {
                device = try Device.open(at: path)
            } else {
                device = try Device.openOrCreate(at: Device.defaultDirectory())
            }
            try device.checkKeys()
        } catch {
            return fail(error.code == .io ? .ioError : .config, error.description)
        }
        if extensionCommand == nil, let problem = NotificationHost.referenceExtensionProblem() {
            return fail(.unavailable, problem)
        }
        if let callAction { device.config.voip.call.action = callAction }
        var host = NotificationHost(
            device: device,
            limits: ExtensionLimits(
                budget: budget, grace: grace, memoryLimitKilobytes: memoryLimitMegabytes.map { Int($0 * 1024) }),
            extensionCommand: extensionCommand.map(NotificationHost.shellCommand)
                ?? NotificationHost.referenceExtensionCommand())
        host.voipMustReport = mustReport
        host.extensionProcesses = ExtensionProcessPool.make(extensionProcess, idleTime: warmIdle)
        defer { host.extensionProcesses?.evictAll() }
        host.extensionForkServers = ExtensionForkServers.make(extensionLaunch) { problem in
            StandardStreams.writeError("nse: \(NotificationResult.terminalSafe(problem))\n")
        }
        defer { host.extensionForkServers?.stopAll() }
        // Several payloads are a sequence of pushes to the same device, one result each as it comes: a compact
        // JSON line each (text: a blank line between them); an input that cannot be read stops the sequence.
        let sequence = payloads.count > 1
        var rejected: [String] = []
        for payload in payloads.isEmpty ? [nil] : payloads.map(Optional.some) {
            let result: NotificationResult
            switch deliver(payload, host: host) {
            case .success(let delivered): result = delivered
            case .failure(let failure): return fail(failure.status, failure.message)
            }
            let document =
                format == .text
                ? result.text + (sequence ? "\n" : "")
                : result.json.serialized(sequence ? .compact : .pretty) + "\n"
            StandardStreams.writeOut(document)
            if result.isRejected { rejected.append(result.reason) }
            // An extension that cannot be started is a broken setup, not an outcome a device could show.
            if result.extensionReport?.killed == "spawn" {
                return fail(.unavailable, "cannot start the extension: \(result.reason)")
            }
        }
        guard let first = rejected.first else { return .ok }
        return fail(
            .rejected, "payload rejected: \(first)" + (rejected.count > 1 ? " (and \(rejected.count - 1) more)" : ""))
    }

    /// Reads one payload (`nil` or `-`: stdin) and delivers it.
    private func deliver(_ payload: String?, host: NotificationHost) -> Result<NotificationResult, CommandInput.Failure>
    {
        let source: PayloadSource = (payload == nil || payload == "-") ? .stdin : .file(payload!)
        let start = SystemClock.monotonicNanoseconds()
        let bytes: [UInt8]?
        do { bytes = try CommandInput.read(payload, limit: RunOptions.readLimit) } catch { return .failure(error) }
        if let bytes { return .success(host.deliver(bytes, pushType: pushType, source: source)) }
        // Not read in full: refused as APNs refuses any payload over its limit, with the same result document.
        let rejection = PayloadRejection(
            .payloadTooLarge,
            "the payload from \(source.name) is larger than 1 MiB (APNs accepts at most \(pushType.payloadLimit) bytes for a \(pushType.rawValue) push)"
        )
        return .success(
            NotificationResult.rejected(
                rejection, requestID: (try? SecureRandom.uuid()) ?? "00000000-0000-4000-8000-000000000000",
                pushType: pushType, intakeMilliseconds: SystemClock.millisecondsSince(start)))
    }

    /// The most `nse run` reads of a payload: far above APNs's limits, so that an oversize payload is measured and
    /// refused by intake; anything longer is refused unread.
    public static let readLimit = 1024 * 1024
}
