import NSEJSON

/// The app's VoIP handler run as a command (`"app_handler": {"command": …}`), as a state machine the
/// ``ProcessDriver`` feeds: the payload goes to its stdin as one line, then end of file; everything it writes on
/// stdout until it exits is its report, within the deadline and 64 KiB.
struct AppHandlerMachine {
    enum Phase: Equatable {
        case launching
        /// Reading its report until `until`.
        case reading(until: UInt64)
        /// Its stdout is closed; it has until `until` to exit (then it is killed, the report stands).
        case exiting(until: UInt64)
        /// It exited (or was ended) with its stdout read: ``output`` is the report.
        case answered
        /// No report: killed for the deadline or an oversize report, or not started.
        case failed(AppLauncher.AppFailure)
    }

    /// The largest report read.
    static let maxReportBytes = 64 * 1024

    let payload: JSONObject
    /// Seconds from launch to the report.
    let reportDeadline: Double
    private(set) var phase: Phase = .launching
    /// What it wrote on stdout.
    private(set) var output: [UInt8] = []

    init(payload: JSONObject, deadline: Double) {
        self.payload = payload
        self.reportDeadline = deadline
    }

    private mutating func fail(_ message: String) -> [ProcessAction] {
        phase = .failed(AppLauncher.AppFailure(message))
        return [.kill, .finish]
    }

    private mutating func append(_ bytes: [UInt8]) -> [ProcessAction] {
        output += bytes
        return output.count > Self.maxReportBytes ? fail("report larger than 64 KiB") : []
    }
}

extension AppHandlerMachine: ProcessMachine {
    var deadline: UInt64? {
        switch phase {
        case .reading(let until), .exiting(let until): until
        case .launching, .answered, .failed: nil
        }
    }

    var samplesMemory: Bool { false }

    mutating func observe(_ observation: ProcessObservation) -> [ProcessAction] {
        switch (phase, observation) {
        case (.answered, _), (.failed, _):
            return []
        case (.launching, .launched(let at)):
            phase = .reading(until: at + ExtensionLimits.nanoseconds(reportDeadline))
            return [.write(JSON.object(payload).serializedBytes() + [0x0A]), .closeStdin]
        case (_, .launchFailed(let message)):
            phase = .failed(AppLauncher.AppFailure("could not launch: \(message)"))
            return [.finish]
        case (.reading, .line(let line, _)):
            return append(line + [0x0A])
        case (.reading, .lineTooLong):
            return fail("report larger than 64 KiB")
        case (.reading(let until), .stdoutClosed(let unterminated)):
            phase = .exiting(until: until)
            return append(unterminated)
        case (.reading, .deadline):
            return fail("no report within \(reportDeadline) s")
        case (.exiting, .deadline):
            phase = .answered
            return [.kill, .finish]
        case (_, .exited):
            phase = .answered
            return [.finish]
        case (.launching, _), (.reading, _), (.exiting, _):
            return []
        }
    }
}
