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
    private let requests = Mutex(())
    private let state = Monitor()
    // Guarded by `state`.
    private var spawned: [Int32] = []
    private var exits: [pid_t: ChildProcess.ExitInfo] = [:]
    private var gone = false

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
    var isGone: Bool { state.locked { gone } }

    /// A fresh child with `descriptors` (its stdin, stdout and stderr) and `environment` over the server's.
    func spawn(onto descriptors: [Int32], environment: [String: String]) -> Result<pid_t, SystemError> {
        var entries: [UInt8] = []
        for (name, value) in environment {
            entries += Array("\(name)=\(value)".utf8) + [0]
        }
        return requests.withLock { _ in
            let sent = descriptors.withUnsafeBufferPointer { fds in
                entries.withUnsafeBufferPointer { bytes in
                    bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(bytes.count, 1)) {
                        nse_fork_request(socket, fds.baseAddress, $0, bytes.count)
                    }
                }
            }
            guard sent == 0 else { return .failure(SystemError.current("fork server request", path: command[0])) }
            let pid: Int32? = state.locked {
                while spawned.isEmpty && !gone { state.wait() }
                return spawned.isEmpty ? nil : spawned.removeFirst()
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
        state.locked {
            while true {
                if let ended = exits.removeValue(forKey: pid) { return ended }
                if gone {
                    kill(-pid, SIGKILL)
                    return ChildProcess.ExitInfo(status: SIGKILL, usage: rusage())
                }
                if !blocking { return nil }
                state.wait()
            }
        }
    }

    /// Ends the server: it exits when its link closes (its children run on to their end); reaped within a second,
    /// else killed.
    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        var status: Int32 = 0
        for _ in 0..<100 {
            let result = waitpid(serverPID, &status, WNOHANG)
            if result == serverPID || (result < 0 && errno != EINTR) { return }
            usleep(10_000)
        }
        kill(-serverPID, SIGKILL)
        waitpid(serverPID, &status, 0)
    }

    /// The link's thread: every reply, until the server has gone.
    private func readReplies() {
        var reply = nse_fork_reply()
        while nse_fork_receive(socket, &reply) == 1 {
            switch reply.kind {
            case Int32(NSE_FORK_SPAWNED):
                state.locked {
                    spawned.append(reply.pid)
                    state.broadcast()
                }
            case Int32(NSE_FORK_EXITED):
                var usage = rusage()
                usage.ru_maxrss = Int(reply.max_rss_kb)
                usage.ru_utime = timeval(
                    tv_sec: Int(reply.user_us / 1_000_000), tv_usec: Int(reply.user_us % 1_000_000))
                usage.ru_stime = timeval(
                    tv_sec: Int(reply.system_us / 1_000_000), tv_usec: Int(reply.system_us % 1_000_000))
                let ended = ChildProcess.ExitInfo(status: reply.status, usage: usage)
                state.locked {
                    exits[reply.pid] = ended
                    state.broadcast()
                }
            default:
                continue
            }
        }
        state.locked {
            gone = true
            state.broadcast()
        }
    }
}
