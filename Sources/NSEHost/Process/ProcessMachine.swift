/// What the driver saw of a child process, handed to its session in order.
enum ProcessObservation: Equatable {
    /// The process started at this monotonic time (nanoseconds); the session's clock starts here.
    case launched(at: UInt64)
    /// The process could not be started.
    case launchFailed(String)
    /// A complete line on its stdout (without the newline), read at `at`.
    case line([UInt8], at: UInt64)
    /// A line on its stdout longer than the channel's limit.
    case lineTooLong
    /// Its stdout reached end of file; `unterminated` is what followed the last newline.
    case stdoutClosed(unterminated: [UInt8])
    /// Both its stdout and its stderr are closed: it is exiting (or left them to another process).
    case pipesClosed
    /// Its memory now (``MemorySample``).
    case memory(MemorySample)
    /// The session's ``ProcessMachine/deadline`` has passed; it is now `now`.
    case deadline(now: UInt64)
    /// The process has exited (and was reaped).
    case exited
    /// The host is stopping (``HostShutdown``); only for sessions that ask (``ProcessMachine/endsOnShutdown``).
    case hostStopping(at: UInt64)
}

/// What a session asks the driver to do.
enum ProcessAction: Equatable {
    /// Write bytes (a line with its newline) to its stdin.
    case write([UInt8])
    /// Close its stdin: it reads end of file.
    case closeStdin
    /// SIGKILL its process group.
    case kill
    /// SIGTERM its process group: asked to end now.
    case terminate
    /// Stop driving: close its stdin, reap it, report.
    case finish
    /// Stop driving and leave the process running, its pipes open (a warm extension process between pushes).
    case release
}

/// The rules of one child process's life, as a state machine the ``ProcessDriver`` feeds: no I/O, no clock.
protocol ProcessMachine {
    /// When the session next wants to be woken (monotonic nanoseconds), whatever the process does.
    var deadline: UInt64? { get }
    /// Whether the driver samples the process's peak memory (at every wake-up while its pipes are open, and
    /// before any line it writes is handed over).
    var samplesMemory: Bool { get }
    /// Whether the driver tells it when the host is stopping (a child that can outlive a push's budget).
    var endsOnShutdown: Bool { get }
    mutating func observe(_ observation: ProcessObservation) -> [ProcessAction]
}

extension ProcessMachine {
    var endsOnShutdown: Bool { false }
}
