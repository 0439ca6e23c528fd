/// What happened to one extension process: the machine's record and what the driver measured. A plain record:
/// ``ExtensionLauncher`` makes one by running a request, ``resumed(_:)`` one for a run an earlier host kept.
struct ExtensionRun {
    var record: ExtensionMachine.Record
    var exitCode: Int32?
    var exitSignal: Int32?
    /// From the spawn (or a warm process's hand-over) to the reap (or its release).
    var wallMilliseconds: Double
    /// What wait4 reported (includes the host's own high-water mark; see docs/protocol.md).
    var wait4MaxRSSKilobytes: Int?
    /// The last 2 KiB it wrote on stderr.
    var stderrTail: String
    /// The process that served the request; nil when none did (``resumed(_:)``).
    var process: NotificationResult.ExtensionReport.ProcessUse?

    /// A run that ended before this host started: its extension handed this over, the host kept it, and the
    /// extension was told so; no process is started again (it would find its messages already let go).
    static func resumed(_ handover: ExtensionHandover) -> ExtensionRun {
        ExtensionRun(
            record: handover.record, exitCode: nil, exitSignal: nil, wallMilliseconds: 0, wait4MaxRSSKilobytes: nil,
            stderrTail: "", process: nil)
    }
}

extension ExtensionRun {
    /// A run of `process`, its session's `record` and what the driver measured of it.
    init(
        record: ExtensionMachine.Record, measured report: ProcessDriver.Report,
        process: NotificationResult.ExtensionReport.ProcessUse
    ) {
        self.init(
            record: record, exitCode: report.exit?.exitCode, exitSignal: report.exit?.signal,
            wallMilliseconds: report.wallMilliseconds, wait4MaxRSSKilobytes: report.exit?.peakRSSKilobytes,
            stderrTail: String(decoding: report.stderr.suffix(2048), as: UTF8.self), process: process)
    }
}
