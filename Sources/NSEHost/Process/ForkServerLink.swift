import CForkServer
import NSEProtocol
import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The host's end of one fork server (`--extension-launch fork`): an extension process started once, which forks a
/// fresh process for each push (CForkServer's loop, docs/protocol.md "Launching by fork").
///
/// Each push's child is the server's child, not the host's: the server reaps it and says how it ended (status,
/// peak resident set, CPU times), which a thread of this link reads and hands to whoever waits for that child.
/// The host still signals the child's process group, reads `/proc/PID` and polls its pidfd as for its own.
final class ForkServerLink: @unchecked Sendable {
    /// The server process (the host's own child).
    let serverPID: pid_t
    let command: [String]
    /// The server said its children need the environment it was started with (one server per environment).
    let environmentAtStart: Bool
    private let socket: Int32
    /// One request at a time: replies to requests come back in the order they were sent.
    /// (A pthread mutex: it is held across the server's fork, and Swift's `Mutex` spins before it sleeps: with 16
    /// threads asking at once, 1.6 % of all samples were that spinning.)
    private let requests = Monitor()
    /// What the replies said, for the threads that wait for them.
    private struct Replies {
        var spawned: [Int32] = []
        var exits: [pid_t: ChildProcess.ExitInfo] = [:]
        /// Who waits for a child's end: each is woken alone (a push's thread, not every one).
        var waiters: [pid_t: Wakeup] = [:]
        var gone = false
    }
    private let replies = Mutex(Replies())
    /// Wakes the one request waiting for its `NSE_FORK_SPAWNED` (requests go one at a time).
    private let spawnedWakeup = Wakeup()

    /// Why a server did not start; the host runs the binary by exec instead.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    private init(serverPID: pid_t, command: [String], environmentAtStart: Bool, socket: Int32) {
        self.serverPID = serverPID
        self.command = command
        self.environmentAtStart = environmentAtStart
        self.socket = socket
    }

    deinit { close(socket) }

    /// Starts `command` as a fork server and waits up to `timeout` seconds for it to say it is ready. A binary that
    /// has no fork server (any program of the host/extension protocol but nse's and the SDK's) never says so.
    static func start(_ command: [String], environment: [String: String], timeout: Double) -> Result<
        ForkServerLink, StartFailure
    > {
        var ends: [Int32] = [-1, -1]
        guard nse_fork_socketpair(&ends) == 0 else {
            return .failure(StartFailure(description: "socketpair: \(SystemError.current("socketpair"))"))
        }
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        var pid: pid_t = 0
        var serverEnvironment = environment
        serverEnvironment[ForkServer.environmentVariable] = "3"
        let status = ChildProcess.launch(
            command, environment: serverEnvironment, onto: [null, null, STDERR_FILENO, ends[1]], pid: &pid)
        close(ends[1])
        if null >= 0 { close(null) }
        guard status == 0 else {
            close(ends[0])
            return .failure(StartFailure(description: "\(SystemError(errnoCode: status, operation: "spawn"))"))
        }
        var reply = nse_fork_reply()
        var watched = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&watched, 1, Int32(timeout * 1000))
        let received = ready > 0 ? nse_fork_receive(ends[0], &reply) : -1
        guard received == 1, reply.kind == Int32(NSE_FORK_READY) else {
            kill(-pid, SIGKILL)
            var ended: Int32 = 0
            waitpid(pid, &ended, 0)
            close(ends[0])
            let why =
                if ready == 0 {
                    "it did not start one within \(timeout) s"
                } else if received == 1,
                    reply.kind == Int32(NSE_FORK_REFUSED)
                {
                    "it refused (\(SystemError(errnoCode: -reply.pid, operation: "fork server")))"
                } else { "it has none (it ended without saying so)" }
            return .failure(StartFailure(description: why))
        }
        let link = ForkServerLink(
            serverPID: pid, command: command,
            environmentAtStart: reply.status & Int32(NSE_FORK_ENVIRONMENT_AT_START) != 0, socket: ends[0])
        guard Threads.detach({ link.readReplies() }) else {
            link.stop()
            return .failure(StartFailure(description: "no thread for its replies"))
        }
        return .success(link)
    }

    /// Whether the server has gone (stopped, or died): it forks no more.
    var isGone: Bool { replies.withLock { $0.gone } }

    /// A fresh child with `descriptors` (its stdin, stdout and stderr) and `environment` over the server's.
    func spawn(onto descriptors: [Int32], environment: [String: String]) -> Result<pid_t, SystemError> {
        var entries: [UInt8] = []
        for (name, value) in environment {
            entries += Array("\(name)=\(value)".utf8) + [0]
        }
        return requests.locked {
            let sent = descriptors.withUnsafeBufferPointer { fds in
                entries.withUnsafeBufferPointer { bytes in
                    bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(bytes.count, 1)) {
                        nse_fork_request(socket, fds.baseAddress, $0, bytes.count)
                    }
                }
            }
            guard sent == 0 else { return .failure(SystemError.current("fork server request", path: command[0])) }
            var pid: Int32?
            while true {
                let (answered, gone): (Int32?, Bool) = replies.withLock { replies in
                    replies.spawned.isEmpty ? (nil, replies.gone) : (replies.spawned.removeFirst(), false)
                }
                pid = answered
                if answered != nil || gone { break }
                spawnedWakeup.wait()
            }
            guard let pid else {
                return .failure(SystemError(errnoCode: ECONNRESET, operation: "fork server", path: command[0]))
            }
            guard pid > 0 else { return .failure(SystemError(errnoCode: -pid, operation: "fork", path: command[0])) }
            return .success(pid)
        }
    }

    /// How child `pid` ended, once the server has reaped it (`blocking` waits for that). A server that died leaves
    /// its children without a parent that can tell: such a child is killed and reported so.
    func exit(of pid: pid_t, blocking: Bool) -> ChildProcess.ExitInfo? {
        enum Next {
            case ended(ChildProcess.ExitInfo)
            case orphaned
            case notYet
            case wait(Wakeup)
        }
        while true {
            let next: Next = replies.withLock { replies in
                if let ended = replies.exits.removeValue(forKey: pid) { return .ended(ended) }
                if replies.gone { return .orphaned }
                if !blocking { return .notYet }
                let wakeup = replies.waiters[pid] ?? Wakeup()
                replies.waiters[pid] = wakeup
                return .wait(wakeup)
            }
            switch next {
            case .ended(let ended): return ended
            case .orphaned:
                kill(-pid, SIGKILL)
                return ChildProcess.ExitInfo(status: SIGKILL, usage: rusage())
            case .notYet: return nil
            case .wait(let wakeup): wakeup.wait()
            }
        }
    }

    /// Ends the server: it exits when its link closes (its children run on to their end); reaped within a second,
    /// else killed.
    func stop() {
        closeLink()
        reap(until: SystemClock.monotonicNanoseconds() + 1_000_000_000)
    }

    /// Closes the link: the server exits (``reap(until:)`` collects it).
    func closeLink() {
        shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Waits for the server's exit until `deadline` (monotonic nanoseconds), then kills it.
    func reap(until deadline: UInt64) {
        ChildProcess.reap(serverPID, until: deadline)
    }

    /// Whether `path` is an ELF file holding the bytes of `marker` (read through a mapping, never run).
    static func isMarked(_ path: String, with marker: String) -> Bool {
        nse_fork_marked(path, marker) == 1
    }

    /// The link's thread: every reply, until the server has gone.
    private func readReplies() {
        var reply = nse_fork_reply()
        while nse_fork_receive(socket, &reply) == 1 {
            switch reply.kind {
            case Int32(NSE_FORK_SPAWNED):
                replies.withLock { $0.spawned.append(reply.pid) }
                spawnedWakeup.signal()
            case Int32(NSE_FORK_EXITED):
                var usage = rusage()
                usage.ru_maxrss = Int(reply.max_rss_kb)
                usage.ru_utime = timeval(
                    tv_sec: Int(reply.user_us / 1_000_000), tv_usec: Int(reply.user_us % 1_000_000))
                usage.ru_stime = timeval(
                    tv_sec: Int(reply.system_us / 1_000_000), tv_usec: Int(reply.system_us % 1_000_000))
                let ended = ChildProcess.ExitInfo(status: reply.status, usage: usage)
                let waiter = replies.withLock { replies in
                    replies.exits[reply.pid] = ended
                    return replies.waiters.removeValue(forKey: reply.pid)
                }
                waiter?.signal()
            default:
                continue
            }
        }
        let waiters = replies.withLock { replies in
            replies.gone = true
            defer { replies.waiters = [:] }
            return Array(replies.waiters.values)
        }
        for waiter in waiters { waiter.signal() }
        spawnedWakeup.signal()
    }
}
