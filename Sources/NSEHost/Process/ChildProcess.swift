import CProcessHandle
import NSEProtocol
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process with pipes on its stdin, stdout and stderr, in its own process group.
///
/// Spawned with `posix_spawn` rather than a process library because the host needs what `wait4` reports
/// (peak RSS) and `/proc/PID/status` while it runs (the memory limit), and must signal the whole group.
final class ChildProcess {
    let pid: pid_t
    /// Lines to the child's stdin and from its stdout.
    let channel: LineChannel
    /// Read end of the child's stdout.
    var stdoutFD: Int32 { channel.input }
    /// Read end of the child's stderr.
    let stderrFD: Int32
    /// A process descriptor (pidfd) for the child, readable once it has exited: the driver waits for the exit in
    /// `poll`. -1 where the kernel has none (before Linux 5.3); closed once the child is reaped.
    private(set) var exitFD: Int32
    private(set) var exit: ExitInfo?

    /// How a process ended, with what `wait4` measured.
    struct ExitInfo {
        var status: Int32
        var usage: rusage

        var exitCode: Int32? { (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil }
        var signal: Int32? { (status & 0x7f) != 0 && (status & 0x7f) != 0x7f ? status & 0x7f : nil }
        var peakRSSKilobytes: Int { Int(usage.ru_maxrss) }
    }

    /// The fork server whose child this is (``forked(by:environment:maxLineBytes:)``): it reaps the child and says
    /// how it ended. nil: the host's own child, reaped with `wait4`.
    private let forkServer: ForkServerLink?

    private init(
        pid: pid_t, stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32, maxLineBytes: Int,
        forkServer: ForkServerLink? = nil
    ) {
        self.pid = pid
        self.forkServer = forkServer
        // A forked process never execs: it runs the extension's program from its first instruction.
        self.execConfirmed = forkServer != nil
        self.channel = LineChannel(input: stdoutFD, output: stdinFD, maxLineBytes: maxLineBytes)
        self.stderrFD = stderrFD
        self.exitFD = nse_pidfd_open(pid)
    }

    deinit {
        closeStdin()
        close(stdoutFD)
        close(stderrFD)
        if exitFD >= 0 { close(exitFD) }
        if statusFD >= 0 { close(statusFD) }
        if exit == nil {
            kill(-pid, SIGKILL)
            if let forkServer {
                _ = forkServer.exit(of: pid, blocking: true)
            } else {
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
        }
    }

    /// Starts `arguments[0]` (looked up on `PATH` when it has no slash) with the given arguments; its stdout is read
    /// as lines of at most `maxLineBytes`.
    /// `environment` is set in the child's environment, over the host's.
    static func spawn(
        _ arguments: [String], environment: [String: String] = [:], maxLineBytes: Int = ExtensionProtocol.maxLineBytes
    ) throws(SystemError) -> ChildProcess {
        precondition(!arguments.isEmpty)
        return try started(maxLineBytes: maxLineBytes) { ends in
            var pid: pid_t = 0
            let status = launch(arguments, environment: environment, onto: ends, pid: &pid)
            return status == 0
                ? .success(pid) : .failure(SystemError(errnoCode: status, operation: "spawn", path: arguments[0]))
        }
    }

    /// A fresh process forked by `server` (`--extension-launch fork`), its pipes as
    /// ``spawn(_:environment:maxLineBytes:)`` makes them; `environment` is set in the child over the server's.
    static func forked(
        by server: ForkServerLink, environment: [String: String] = [:],
        maxLineBytes: Int = ExtensionProtocol.maxLineBytes
    ) throws(SystemError) -> ChildProcess {
        try started(maxLineBytes: maxLineBytes, forkServer: server) { ends in
            server.spawn(onto: ends, environment: environment)
        }
    }

    /// The child's three pipes, made for `start`, which starts it on their child ends (its stdin, stdout and stderr)
    /// and says its pid: those ends are closed whatever happened, the host's kept by the ``ChildProcess`` (or closed
    /// when it could not start).
    private static func started(
        maxLineBytes: Int, forkServer: ForkServerLink? = nil, _ start: ([Int32]) -> Result<pid_t, SystemError>
    ) throws(SystemError) -> ChildProcess {
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var ends: [Int32] = [-1, -1]
            guard makePipe(&ends) else {
                closeAll(pipes.flatMap { $0 })
                throw SystemError.current("pipe")
            }
            pipes.append(ends)
        }
        let childEnds = [pipes[0][0], pipes[1][1], pipes[2][1]]
        let hostEnds = [pipes[0][1], pipes[1][0], pipes[2][0]]
        let result = start(childEnds)
        closeAll(childEnds)
        let pid: pid_t
        switch result {
        case .success(let started): pid = started
        case .failure(let error):
            closeAll(hostEnds)
            throw error
        }
        for descriptor in hostEnds.dropFirst() {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        return ChildProcess(
            pid: pid, stdinFD: hostEnds[0], stdoutFD: hostEnds[1], stderrFD: hostEnds[2], maxLineBytes: maxLineBytes,
            forkServer: forkServer)
    }

    /// posix_spawn of `arguments` with `descriptors` dup'ed onto 0, 1, 2… and nothing else of the host's open, in a
    /// process group of its own, with default signal dispositions and an empty signal mask; `environment` over the
    /// host's. 0, or the error number.
    static func launch(
        _ arguments: [String], environment: [String: String], onto descriptors: [Int32], pid: inout pid_t
    ) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, descriptor) in descriptors.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target))
        }
        // Nothing else of the host's: a socket some library opened without close-on-exec (a listener, a database
        // connection) would otherwise live on in an extension that outlives the host, still accepting.
        _ = nse_spawn_close_from(&actions, Int32(max(descriptors.count, 3)))

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group (so the whole group can be killed), default signal dispositions (the host
        // ignores SIGPIPE; the child must not inherit that), and an empty signal mask.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        if environment.isEmpty {
            return posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        }
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let name = String(text.prefix { $0 != "=" })
            if environment[name] == nil { entries.append(text) }
            index += 1
        }
        entries += environment.map { "\($0.key)=\($0.value)" }
        let envp = entries.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        return posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
    }

    /// Reaps `pid`, a process this host started that was told to end, waiting for it until `deadline` (monotonic
    /// nanoseconds) on its pidfd (a kernel before Linux 5.3 has none: then every 5 ms), then killing its group.
    static func reap(_ pid: pid_t, until deadline: UInt64) {
        var status: Int32 = 0
        let exited = nse_pidfd_open(pid)
        defer { if exited >= 0 { close(exited) } }
        while case let now = SystemClock.monotonicNanoseconds(), now < deadline {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno != EINTR) { return }
            guard exited >= 0 else {
                usleep(5_000)
                continue
            }
            var watched = pollfd(fd: exited, events: Int16(POLLIN), revents: 0)
            _ = poll(&watched, 1, Int32((deadline - now) / 1_000_000) + 1)
        }
        kill(-pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    /// A command line run through `/bin/sh` with `exec`, so that the measured process is the command's, not the shell.
    /// `environment` is exported to it first (names and values are nse's own, never a user's: they are not quoted).
    static func shellCommand(_ commandLine: String, environment: KeyValuePairs<String, String> = [:]) -> [String] {
        let exports = environment.map { "export \($0.key)=\($0.value); " }.joined()
        return ["/bin/sh", "-c", exports + "exec \(commandLine)"]
    }

    /// One of nse's own executables: `$variable` when set, else `name` beside the running executable (the running
    /// executable itself when it is `name`), else `name` on `PATH`.
    static func sibling(_ name: String, overriddenBy variable: String) -> [String] {
        if let explicit = Environment.get(variable) { return [explicit] }
        if let executable = FileSystem.executablePath() {
            if Path.basename(executable) == name { return [executable] }
            let sibling = Path.join(Path.dirname(executable), name)
            if FileSystem.isExecutable(sibling) { return [sibling] }
        }
        return [name]
    }

    /// SIGKILLs the child's process group and reaps it.
    func killAndReap() {
        signalGroup(SIGKILL)
        reap(blocking: true)
    }

    /// A pipe whose ends are closed on exec (the child gets only the ends dup'ed onto 0, 1 and 2).
    static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private static func closeAll(_ descriptors: [Int32]) {
        for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
    }

    /// Writes bytes to the child's stdin; `false` when the child no longer reads it.
    @discardableResult
    func writeStdin(_ bytes: [UInt8]) -> Bool {
        channel.send(bytes)
    }

    /// Closes the child's stdin (the child reads end-of-file).
    func closeStdin() {
        channel.closeOutput()
    }

    /// Sends `signal` to the child's whole process group.
    func signalGroup(_ signal: Int32) {
        if exit == nil { kill(-pid, signal) }
    }

    /// Reaps the child if it has ended (`blocking` waits for it).
    @discardableResult
    func reap(blocking: Bool) -> ExitInfo? {
        if let exit { return exit }
        if let forkServer {
            // Once its pidfd says it has ended, the server's word on it is on its way: waited for, not polled (the
            // pidfd stays readable, and the driver's poll would spin until the word came).
            guard let ended = forkServer.exit(of: pid, blocking: blocking || hasEnded) else { return nil }
            return reaped(ended)
        }
        var status: Int32 = 0
        var usage = rusage()
        while true {
            let result = wait4(pid, &status, blocking ? 0 : WNOHANG, &usage)
            if result == pid { return reaped(ExitInfo(status: status, usage: usage)) }
            if result < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Whether the pidfd says the process has ended.
    private var hasEnded: Bool {
        guard exitFD >= 0 else { return false }
        var watched = pollfd(fd: exitFD, events: Int16(POLLIN), revents: 0)
        return poll(&watched, 1, 0) > 0
    }

    private func reaped(_ ended: ExitInfo) -> ExitInfo {
        exit = ended
        endSampling()
        if exitFD >= 0 {
            close(exitFD)
            exitFD = -1
        }
        return ended
    }

    /// Whether the child is known to run its own program (its exec has replaced the host's address space).
    private var execConfirmed = false
    /// `/proc/self/exe`: what a child still sharing the host's address space shows as its executable.
    private static let hostExecutable = FileSystem.executablePath()
    /// Reused for every read of `/proc/PID/status`.
    private var statusBuffer = [UInt8](repeating: 0, count: 4096)
    /// `/proc/PID/status`, open from a session's first sample to its end (``endSampling()``): each sample reads it
    /// again from the start (the kernel renders it anew), without a path lookup, an open and a close per sample. The
    /// open file stays bound to this child: once it is gone, reads fail rather than show another process given its
    /// PID. A warm process waiting for its next push holds no such descriptor.
    private var statusFD: Int32 = -1

    /// Closes `/proc/PID/status` until the next sample.
    func endSampling() {
        guard statusFD >= 0 else { return }
        close(statusFD)
        statusFD = -1
    }

    /// The child's memory now: its resident peak and its footprint as iOS counts one (``MemorySample``), both from
    /// one read of `/proc/PID/status`; `nil` until its exec has completed (``status()``).
    ///
    /// The footprint is `RssAnon` + `VmSwap`: the same figure as `Private_Dirty` + `Swap` in `smaps_rollup` for an
    /// extension (1576 KB both for the SDK's template, 200 KB both for the reference extension), which the kernel
    /// renders by walking every mapping: 0.33 ms a sample for a process with Foundation mapped, against 0.03 ms.
    ///
    /// A sample sees the footprint of its moment, and memory taken and given back between two samples (a bitmap
    /// decoded, scaled, freed: 12 MB in 5 ms) would escape them, where iOS's kernel kills at the page that crosses
    /// the limit. The resident peak catches it: at the peak, the resident set was anonymous memory plus file
    /// pages, and file pages (code, mapped files) are only added in a run this short, so `VmHWM` − `RssFile` −
    /// `RssShmem` now is at most what the anonymous memory was then. The footprint is the larger of the two.
    func memory() -> MemorySample? {
        guard let status = status(), let peak = Self.field("VmHWM:", in: status) else { return nil }
        // RssAnon is Linux 4.5's: before it, no footprint, and the limit judges the resident peak.
        guard let anonymous = Self.field("RssAnon:", in: status) else {
            return MemorySample(residentPeak: peak, footprint: nil)
        }
        let now = anonymous + (Self.field("VmSwap:", in: status) ?? 0)
        let files = (Self.field("RssFile:", in: status) ?? peak) + (Self.field("RssShmem:", in: status) ?? 0)
        return MemorySample(residentPeak: peak, footprint: max(now, peak - files))
    }

    /// The child's peak resident set so far (`VmHWM`), in kilobytes; `nil` until its exec has completed.
    func peakRSSKilobytes() -> Int? {
        status().flatMap { Self.field("VmHWM:", in: $0) }
    }

    /// `/proc/PID/status` now; `nil` until the child's exec has completed. posix_spawn returns as soon as the exec
    /// releases the host's address space, which the kernel does a moment before switching the child to its own:
    /// read in that moment, `/proc` shows the host's memory, and the extension would be killed for the host's size.
    /// So nothing is read until `/proc/PID/exe` is not the host's.
    private func status() -> ArraySlice<UInt8>? {
        guard exit == nil else { return nil }
        if !execConfirmed {
            guard let executable = FileSystem.readLink("/proc/\(pid)/exe"), executable != Self.hostExecutable else {
                return nil
            }
            execConfirmed = true
        }
        if statusFD < 0 {
            statusFD = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
            guard statusFD >= 0 else { return nil }
        }
        let fd = statusFD
        let count = statusBuffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return statusBuffer[0..<count]
    }

    /// The number after `name` on its line of a `/proc` status file, without making strings.
    static func field(_ name: StaticString, in bytes: ArraySlice<UInt8>) -> Int? {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes.endIndex - index >= key.count, bytes[index..<index + key.count].elementsEqual(key) {
                var value = 0
                var digits = 0
                var cursor = index + key.count
                while cursor < bytes.endIndex, bytes[cursor] != 0x0A {
                    let byte = bytes[cursor]
                    if byte >= 0x30 && byte <= 0x39 {
                        value = value * 10 + Int(byte - 0x30)
                        digits += 1
                    }
                    cursor += 1
                }
                return digits > 0 ? value : nil
            }
            while index < bytes.endIndex, bytes[index] != 0x0A { index += 1 }
            index += 1
        }
        return nil
    }
}
