import NSEProtocol

/// What happened to one extension process: the session's record and what the driver measured.
struct ExtensionRun {
    var record: ExtensionSession.Record
    var exitCode: Int32?
    var exitSignal: Int32?
    var wallMilliseconds: Double
    /// What wait4 reported (includes the host's own high-water mark; see docs/protocol.md).
    var wait4MaxRSSKilobytes: Int?
    var stderrTail: String

    /// Runs one extension process for `request` under `limits`; `keepContent` keeps what it delivers before it is
    /// told so (``ExtensionProcess/keepContent``).
    static func run(
        command: [String], request: ServiceRequest, limits: ExtensionLimits, filteringEntitlement: Bool,
        keepContent: (@Sendable (ExtensionHandover) -> Bool)? = nil
    ) -> ExtensionRun {
        var process = ExtensionProcess(
            session: ExtensionSession(request: request, limits: limits, filteringEntitlement: filteringEntitlement),
            keepContent: keepContent)
        let report = ProcessDriver.run(command, session: &process)
        return ExtensionRun(
            record: process.session.record, exitCode: report.exit?.exitCode, exitSignal: report.exit?.signal,
            wallMilliseconds: report.wallMilliseconds, wait4MaxRSSKilobytes: report.exit?.peakRSSKilobytes,
            stderrTail: String(decoding: report.stderr.suffix(2048), as: UTF8.self))
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
        }
    }
}
