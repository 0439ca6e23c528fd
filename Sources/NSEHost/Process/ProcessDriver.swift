import NSEProtocol
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs one child process for a ``ProcessMachine``: spawns it, polls its stdout (lines, through its
/// `LineChannel`) and stderr, samples `/proc`, fires the session's deadline, reaps it, and does what the session
/// asks. All the I/O and none of the rules.
enum ProcessDriver {
    /// What the driver measured.
    struct Report {
        /// How it ended (nil when it could not be started).
        var exit: ChildProcess.ExitInfo?
        /// From the spawn to the reap.
        var wallMilliseconds: Double = 0
        /// The last bytes it wrote on stderr (at most 8 KiB).
        var stderr: [UInt8] = []
        /// The session let the process go on running (a warm extension process, idle until its next request).
        var released = false
    }

    /// Runs `command` under `session` until the session finishes or the process has exited and closed its pipes.
    /// A session that releases the process hands it back in `kept`, still running. With `forkServers`, the process
    /// is forked by the command's fork server when it has one (`--extension-launch fork`).
    static func run(
        _ command: [String], environment: [String: String] = [:], forkServers: ExtensionForkServers? = nil,
        session: inout some ProcessMachine, kept: inout ChildProcess?
    ) -> Report {
        let start = SystemClock.monotonicNanoseconds()
        let child: ChildProcess
        do {
            if let forked = forkServers?.child(command, environment: environment) {
                child = forked
            } else {
                child = try ChildProcess.spawn(command, environment: environment)
            }
        } catch {
            _ = session.observe(.launchFailed(error.description))
            return Report()
        }
        let report = drive(child, session: &session, since: start)
        if report.released { kept = child }
        return report
    }

    /// Runs `command` under `session`, a process that is never kept.
    static func run(_ command: [String], session: inout some ProcessMachine) -> Report {
        var kept: ChildProcess?
        let report = run(command, session: &session, kept: &kept)
        kept?.closeStdin()
        return report
    }

    /// Drives a running `child` under `session` (a fresh process, or a warm one handed its next request), `start`
    /// being when the session's clock starts: until the session finishes (the process is reaped) or releases it (the
    /// process goes on running, its pipes open).
    static func drive(_ child: ChildProcess, session: inout some ProcessMachine, since start: UInt64) -> Report {
        var report = Report()
        var finished = false
        func apply(_ actions: [ProcessAction]) {
            for action in actions {
                switch action {
                case .write(let bytes): child.writeStdin(bytes)
                case .closeStdin: child.closeStdin()
                case .kill: child.signalGroup(SIGKILL)
                case .terminate: child.signalGroup(SIGTERM)
                case .finish: finished = true
                case .release:
                    finished = true
                    report.released = true
                }
            }
        }
        func observe(_ observation: ProcessObservation) {
            if !finished { apply(session.observe(observation)) }
        }
        // The last sample, monotonic: the loop samples at each wake-up once a millisecond has passed since it, and
        // before each batch of lines whatever the time (the line may be the content). None at once: a process just
        // started has not run yet (its exec is not even confirmed), and a warm one has not run since its last push's
        // samples (each read of `status` costs the host about 20 µs).
        var sampledAt = start
        func sampleMemory() {
            sampledAt = SystemClock.monotonicNanoseconds()
            if session.samplesMemory, let sample = child.memory() { observe(.memory(sample)) }
        }

        observe(.launched(at: start))
        // A warm process may have written lines while it was idle (after its `ready`): they are this session's.
        readLines(child.channel, sampleFirst: sampleMemory, observe: observe, isFinished: { finished })
        var stdoutOpen = true
        var stderrOpen = true
        var toldShutdown = false
        var exitWait: UInt32 = 50
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while !finished {
            if stdoutOpen || stderrOpen, SystemClock.monotonicNanoseconds() - sampledAt >= 1_000_000 { sampleMemory() }
            if !finished, let deadline = session.deadline, SystemClock.monotonicNanoseconds() >= deadline {
                observe(.deadline(now: SystemClock.monotonicNanoseconds()))
            }
            if finished { break }
            if !stdoutOpen && !stderrOpen {
                // Both pipes closed: the process is exiting (or detached from them); reap it as soon as it has.
                if child.reap(blocking: false) != nil {
                    observe(.exited)
                    break
                }
                if child.exitFD >= 0 {
                    // Its process descriptor turns readable when it has exited; the deadline (or a memory sample)
                    // ends the wait before that.
                    var exit = [pollfd(fd: child.exitFD, events: Int16(POLLIN), revents: 0)]
                    _ = poll(&exit, 1, waitTimeout(session))
                } else {
                    usleep(exitWait)
                    exitWait = min(exitWait * 2, 2000)
                }
                continue
            }
            var descriptors: [pollfd] = []
            if stdoutOpen { descriptors.append(pollfd(fd: child.stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if stderrOpen { descriptors.append(pollfd(fd: child.stderrFD, events: Int16(POLLIN), revents: 0)) }
            let shutdown = session.endsOnShutdown && !toldShutdown ? HostShutdown.descriptor : -1
            if shutdown >= 0 { descriptors.append(pollfd(fd: shutdown, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), waitTimeout(session))
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            for descriptor in descriptors where descriptor.revents != 0 && !finished {
                if descriptor.fd == shutdown {
                    toldShutdown = true
                    observe(.hostStopping(at: SystemClock.monotonicNanoseconds()))
                    continue
                }
                if descriptor.fd == child.stderrFD {
                    let count = chunk.withUnsafeMutableBytes { read(child.stderrFD, $0.baseAddress, $0.count) }
                    if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                    if count <= 0 {
                        stderrOpen = false
                        continue
                    }
                    report.stderr.append(contentsOf: chunk[0..<count])
                    if report.stderr.count > 8192 { report.stderr.removeFirst(report.stderr.count - 8192) }
                    continue
                }
                switch child.channel.fill() {
                case .nothing:
                    continue
                case .read:
                    readLines(child.channel, sampleFirst: sampleMemory, observe: observe, isFinished: { finished })
                case .closed:
                    readLines(child.channel, sampleFirst: sampleMemory, observe: observe, isFinished: { finished })
                    stdoutOpen = false
                    observe(.stdoutClosed(unterminated: child.channel.unterminated))
                }
            }
            if !stdoutOpen && !stderrOpen { observe(.pipesClosed) }
        }
        report.wallMilliseconds = SystemClock.millisecondsSince(start)
        child.endSampling()
        if report.released { return report }
        child.closeStdin()
        report.exit = child.reap(blocking: true)
        report.wallMilliseconds = SystemClock.millisecondsSince(start)
        return report
    }

    /// While memory is sampled the loop wakes this often (ms); without sampling, the deadline alone wakes it. A spike
    /// between two samples is caught by the next one (the resident peak counts, `MemorySample`), and every batch of
    /// lines is preceded by one: the interval decides how soon a process over the limit is killed, not whether. It
    /// started at 2 ms, then 5 doubling to 20 until 2026-11-29: a warm SIP push (~10 ms under load) was sampled 4.6
    /// times, two or three of them wake-ups that judged nothing its lines' samples would not.
    static let sampleInterval: Int32 = 20

    /// How long one wait may last, in milliseconds: until the session's deadline (at most a second), and, while the
    /// session samples memory, until the next sample (``sampleInterval``).
    private static func waitTimeout(_ session: some ProcessMachine) -> Int32 {
        let now = SystemClock.monotonicNanoseconds()
        var timeout: Int32 = 1000
        if let deadline = session.deadline {
            timeout = deadline > now ? Int32(min((deadline - now) / 1_000_000 + 1, 1000)) : 0
        }
        if session.samplesMemory {
            timeout = min(timeout, sampleInterval)
        }
        return timeout
    }

    /// Hands every complete line waiting in `channel` to the session, sampling memory once before the first (the
    /// line may be the content whose size counts).
    private static func readLines(
        _ channel: LineChannel, sampleFirst: () -> Void, observe: (ProcessObservation) -> Void, isFinished: () -> Bool
    ) {
        var sampled = false
        while !isFinished() {
            let line: [UInt8]?
            do { line = try channel.bufferedLine() } catch {
                observe(.lineTooLong)
                return
            }
            guard let line else { return }
            if !sampled {
                sampled = true
                sampleFirst()
                if isFinished() { return }
            }
            observe(.line(line, at: SystemClock.monotonicNanoseconds()))
        }
    }
}
