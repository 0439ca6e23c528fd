import NSEDevice
import NSEProtocol
import NSESystem

/// What happened to one extension process: the session's record and what the driver measured.
struct ExtensionRun {
    var record: ExtensionMachine.Record
    var exitCode: Int32?
    var exitSignal: Int32?
    var wallMilliseconds: Double
    /// What wait4 reported (includes the host's own high-water mark; see docs/protocol.md).
    var wait4MaxRSSKilobytes: Int?
    var stderrTail: String
    /// The process that served the request.
    var process = NotificationResult.ExtensionReport.ProcessUse(warm: false, pushes: 1, kept: false)

    /// Runs `request` under `limits` in an extension process: a warm one from `pool` if one is idle there, else a
    /// fresh one (kept in the pool afterwards when there is a pool and the process can serve several requests);
    /// `keepContent` keeps what it delivers before it is told so (``ExtensionProcess/keepContent``).
    static func run(
        command: [String], request: ServiceRequest, limits: ExtensionLimits, filteringEntitlement: Bool,
        release: IOSVersion = .current, pool: ExtensionProcessPool? = nil,
        keepContent: (@Sendable (ExtensionHandover) -> Bool)? = nil
    ) -> ExtensionRun {
        let key = ExtensionProcessPool.Key(container: request.container, command: command)
        let warm = pool?.checkOut(key)
        let terms = ExtensionMachine.ProcessTerms(
            keep: pool != nil, hello: warm?.hello,
            startTime: warm == nil ? limits.startTime.map(ExtensionLimits.nanoseconds) : nil)
        var process = ExtensionProcess(
            session: ExtensionMachine(
                request: request, limits: limits, filteringEntitlement: filteringEntitlement, release: release,
                terms: terms),
            keepContent: keepContent)
        let report: ProcessDriver.Report
        var use = NotificationResult.ExtensionReport.ProcessUse(
            warm: warm != nil, pushes: (warm?.pushes ?? 0) + 1, kept: false)
        if let warm {
            report = ProcessDriver.drive(warm.child, session: &process, since: SystemClock.monotonicNanoseconds())
            warm.pushes = use.pushes
            if report.released, let pool = pool {
                pool.checkIn(warm, as: key)
                use.kept = true
            }
        } else {
            var kept: ChildProcess?
            // Its preferences (`UserDefaults`, an App Group's suite) in the device's container, shared by its
            // processes as iOS shares an App Group's: Foundation on Linux reads where they go when it starts.
            let environment = ["XDG_CONFIG_HOME": Path.join(request.container, "Library", "Preferences")]
            report = ProcessDriver.run(command, environment: environment, session: &process, kept: &kept)
            if let kept, let pool = pool, let hello = process.session.record.hello {
                pool.checkIn(
                    ExtensionProcessPool.WarmProcess(child: kept, hello: hello, pushes: 1, idleSince: 0), as: key)
                use.kept = true
            }
        }
        return ExtensionRun(
            record: process.session.record, exitCode: report.exit?.exitCode, exitSignal: report.exit?.signal,
            wallMilliseconds: report.wallMilliseconds, wait4MaxRSSKilobytes: report.exit?.peakRSSKilobytes,
            stderrTail: String(decoding: report.stderr.suffix(2048), as: UTF8.self), process: use)
    }

    /// A run that ended before this host started: its extension handed this over, the host kept it, and the
    /// extension was told so; no process is started again (it would find its messages already let go).
    static func resumed(_ handover: ExtensionHandover) -> ExtensionRun {
        ExtensionRun(
            record: handover.record, exitCode: nil, exitSignal: nil, wallMilliseconds: 0, wait4MaxRSSKilobytes: nil,
            stderrTail: "")
    }

    /// The result's `extension.killed`: why the host killed it, nil when it ended on its own (or was ended after
    /// delivering).
    var killedName: String? {
        switch record.termination {
        case .exited: nil
        case .budget: "budget"
        case .memory: "memory"
        case .spawnFailed: "spawn"
        case .protocolViolation: "protocol"
        case .slowStart: "start"
        }
    }
}
