import NSEDevice
import NSEProtocol
import NSESystem

/// Runs a request in an extension process: a warm one from the pool when one is idle there, else a fresh one (kept in
/// the pool afterwards when there is a pool and the process can serve several requests).
struct ExtensionLauncher {
    private typealias ProcessUse = NotificationResult.ExtensionReport.ProcessUse

    /// The extension program and its arguments.
    var command: [String]
    var limits: ExtensionLimits
    var filteringEntitlement: Bool
    var release: IOSVersion = .current
    /// Where warm processes are kept between pushes; nil: a fresh process for every request, ended after it.
    var pool: ExtensionProcessPool?
    /// Fresh processes forked by the extension's fork server (`--extension-launch fork`); nil: exec'd.
    var forkServers: ExtensionForkServers?

    /// Runs `request` under ``limits`` until its process is reaped or kept; `keepContent` keeps what the extension
    /// delivers before it is told so (``ExtensionProcess/keepContent``), `notifications` takes the local
    /// notifications it adds.
    func run(
        _ request: ServiceRequest, keepContent: (@Sendable (ExtensionHandover) -> Bool)? = nil,
        notifications: LocalNotificationPoster? = nil
    ) -> ExtensionRun {
        let key = ExtensionProcessPool.Key(container: request.container, command: command)
        let hooks = Hooks(keepContent: keepContent, notifications: notifications)
        if let warm = pool?.checkOut(key) {
            return runWarm(warm, request, key: key, hooks: hooks)
        }
        return runFresh(request, key: key, hooks: hooks)
    }

    /// What the host does for the session beside running it.
    private struct Hooks {
        var keepContent: (@Sendable (ExtensionHandover) -> Bool)?
        var notifications: LocalNotificationPoster?
    }

    /// A warm process is handed the request; it goes back to the pool when it says `ready` again.
    private func runWarm(
        _ warm: ExtensionProcessPool.WarmProcess, _ request: ServiceRequest, key: ExtensionProcessPool.Key,
        hooks: Hooks
    ) -> ExtensionRun {
        var process = session(for: request, warm: warm, hooks: hooks)
        var use = ProcessUse(warm: true, pushes: warm.pushes + 1, kept: false)
        let report = ProcessDriver.drive(warm.child, session: &process, since: SystemClock.monotonicNanoseconds())
        warm.pushes = use.pushes
        if report.released, let pool {
            pool.checkIn(warm, as: key)
            use.kept = true
        }
        return ExtensionRun(record: process.session.record, measured: report, process: use)
    }

    /// A new process; a pool keeps it when it said `ready` after its content.
    private func runFresh(_ request: ServiceRequest, key: ExtensionProcessPool.Key, hooks: Hooks) -> ExtensionRun {
        var process = session(for: request, warm: nil, hooks: hooks)
        var use = ProcessUse(warm: false, pushes: 1, kept: false)
        var kept: ChildProcess?
        // Its preferences (`UserDefaults`, an App Group's suite) in the device's container, shared by its
        // processes as iOS shares an App Group's: Foundation on Linux reads where they go when it starts.
        // And the memory limit it runs under, which `os_proc_available_memory()` answers from.
        var environment = [
            "XDG_CONFIG_HOME": Path.join(request.container, "Library", "Preferences"),
            "NSE_MEMORY_LIMIT_KB": String(limits.memoryLimitKilobytes),
        ]
        if let bundle = ExtensionForkServers.executable(of: command).map(Path.dirname), bundle.hasSuffix(".appex") {
            environment.merge(ExtensionSandbox(container: request.container).environment()) { $1 }
        }
        let report = ProcessDriver.run(
            command, environment: environment, forkServers: forkServers, session: &process, kept: &kept)
        if let kept, let pool, let hello = process.session.record.hello {
            pool.checkIn(ExtensionProcessPool.WarmProcess(child: kept, hello: hello, pushes: 1, idleSince: 0), as: key)
            use.kept = true
        }
        return ExtensionRun(record: process.session.record, measured: report, process: use)
    }

    /// The session for `request`. A warm process has started already: it is not held to a fresh one's start time,
    /// and its `hello` is known.
    private func session(
        for request: ServiceRequest, warm: ExtensionProcessPool.WarmProcess?, hooks: Hooks
    ) -> ExtensionProcess {
        let terms = ExtensionMachine.ProcessTerms(
            keep: pool != nil, hello: warm?.hello,
            startTime: warm == nil ? limits.startTime.map(ExtensionLimits.nanoseconds) : nil)
        return ExtensionProcess(
            session: ExtensionMachine(
                request: request, limits: limits, filteringEntitlement: filteringEntitlement, release: release,
                terms: terms),
            keepContent: hooks.keepContent, notifications: hooks.notifications)
    }
}
