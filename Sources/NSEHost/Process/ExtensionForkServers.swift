import NSEProtocol
import NSESystem
import Synchronization

/// Fresh extension processes forked instead of exec'd (`--extension-launch fork`): one fork server per extension
/// command, started on its first push, forks each push's process (``ForkServerLink``).
///
/// Still a process per push, as iOS runs one, that no earlier push ran in; what is saved is the exec and the
/// runtime's one-time work (the binary mapped, type metadata built on first use, libsodium's CPU probe), done once
/// in the server. Only a binary that has a fork server (nse's reference extension, one built against the SDK:
/// ``hasForkServer(_:)``) is started as one; any other command (a script of the host/extension protocol) runs by
/// exec, as without the option, and so does every push while a server starts, and for a minute after one failed.
public final class ExtensionForkServers: Sendable {
    /// How fresh extension processes start (`--extension-launch`).
    public enum Launch: String, Sendable, CaseIterable {
        /// Each one exec'd (posix_spawn).
        case exec
        /// Each one forked by the extension's fork server.
        case fork
    }

    /// The fork servers `launch` asks for: none for `exec`.
    public static func make(_ launch: Launch, onProblem: @escaping @Sendable (String) -> Void) -> ExtensionForkServers?
    {
        launch == .fork ? ExtensionForkServers(onProblem: onProblem) : nil
    }

    /// A server: of a command, for any environment, or for one (a command whose server said it reads its
    /// environment as it starts).
    private struct Key: Hashable {
        var command: [String]
        var environment: [String: String]?
    }

    private enum Server {
        case starting
        case running(ForkServerLink)
        /// Not started (it failed); tried again after the monotonic time.
        case unavailable(until: UInt64)
    }

    private struct State {
        var servers: [Key: Server] = [:]
        /// Commands whose servers each serve one environment.
        var perEnvironment: Set<[String]> = []
        /// Whether each command's binary has a fork server (``hasForkServer(_:)``, read once per command).
        var forkable: [[String]: Bool] = [:]
    }

    private let state = Mutex(State())
    private let onProblem: @Sendable (String) -> Void
    /// How long a server may take to start (its warm-up included).
    static let startTimeout = 5.0
    /// How long a command runs by exec after its server could not start.
    static let retryAfter: UInt64 = 60_000_000_000
    /// Servers of one environment each (a device's, for an SDK extension) kept at most; past them, exec.
    static let maxServers = 64

    /// `onProblem` hears, in one line, why a command's processes are exec'd after all.
    public init(onProblem: @escaping @Sendable (String) -> Void = { _ in }) {
        self.onProblem = onProblem
    }

    /// A fresh process of `command` forked by its server, `environment` set in it; nil when there is no server for
    /// it now (the caller execs the process).
    func child(_ command: [String], environment: [String: String]) -> ChildProcess? {
        let now = SystemClock.monotonicNanoseconds()
        enum Next {
            case fork(ForkServerLink)
            case start(Key, replacing: ForkServerLink?)
            case exec
            case unclassified
        }
        let next: Next = state.withLock { state in
            guard let forkable = state.forkable[command] else { return .unclassified }
            if !forkable { return .exec }
            let perEnvironment = state.perEnvironment.contains(command)
            let key = Key(command: command, environment: perEnvironment ? environment : nil)
            switch state.servers[key] {
            case .running(let link)? where !link.isGone: return .fork(link)
            case .starting?: return .exec
            case .unavailable(let until)? where now < until: return .exec
            case .running(let dead)?:
                // Its server died (killed, crashed): reaped, and a new one started for this push.
                state.servers[key] = .starting
                return .start(key, replacing: dead)
            default:
                if perEnvironment, state.servers.count >= Self.maxServers { return .exec }
                state.servers[key] = .starting
                return .start(key, replacing: nil)
            }
        }
        let link: ForkServerLink
        switch next {
        case .exec: return nil
        case .unclassified:
            // Read outside the lock (a scan of the binary, tens of MB, once per command); the thread that records
            // the answer first says so when it is no.
            let found = Self.hasForkServer(command)
            let first = state.withLock { $0.forkable.updateValue(found, forKey: command) == nil }
            guard found else {
                if first {
                    onProblem(
                        "\(command.joined(separator: " ")) has no fork server (not nse-extension nor built against the SDK); its processes are exec'd"
                    )
                }
                return nil
            }
            return child(command, environment: environment)
        case .fork(let running): link = running
        case .start(let key, let dead):
            dead?.stop()
            // Started with this push's environment: right for it whatever the server says of environments.
            switch ForkServerLink.start(command, environment: environment, timeout: Self.startTimeout) {
            case .success(let started):
                state.withLock { state in
                    state.servers[key] = nil
                    if started.environmentAtStart { state.perEnvironment.insert(command) }
                    let serves = Key(command: command, environment: started.environmentAtStart ? environment : nil)
                    state.servers[serves] = .running(started)
                }
                link = started
            case .failure(let failure):
                state.withLock { $0.servers[key] = .unavailable(until: now + Self.retryAfter) }
                onProblem("no fork server for \(command[0]): \(failure); its processes are exec'd")
                return nil
            }
        }
        do { return try ChildProcess.forked(by: link, environment: environment) } catch {
            if link.isGone { restart(link) }
            onProblem("the fork server for \(command[0]) could not fork: \(error); this process is exec'd")
            return nil
        }
    }

    /// The binary `command` runs: its first word, or the one a `/bin/sh -c "exec PATH"` line
    /// (`ChildProcess.shellCommand`, an `--extension` given as a command line) execs.
    static func executable(of command: [String]) -> String? {
        guard command.first == "/bin/sh", command.count == 3, command[1] == "-c" else { return command.first }
        guard let path = command[2].split(separator: "exec ", omittingEmptySubsequences: false).last,
            command[2].contains("exec "), !path.isEmpty, !path.contains(" "), !path.contains("\""), !path.contains("'")
        else { return nil }
        return String(path)
    }

    /// Whether `command` runs a binary with a fork server: an ELF executable that holds
    /// `ForkServer.environmentVariable` (read once per command; never started to find out, as a script would run).
    static func hasForkServer(_ command: [String]) -> Bool {
        // A path with a slash, relative to the working folder as the shell would take it; a bare name is looked up
        // on PATH by the shell, not here: exec'd.
        guard let path = executable(of: command), path.contains("/") else { return false }
        return ForkServerLink.isMarked(FileSystem.absolute(path), with: ForkServer.environmentVariable)
    }

    /// A server that died: reaped, and started again on the next push.
    private func restart(_ link: ForkServerLink) {
        let stale = state.withLock { state in
            guard
                let key = state.servers.first(where: {
                    if case .running(let current) = $0.value { return current === link }
                    return false
                })?.key
            else { return false }
            state.servers[key] = nil
            return true
        }
        if stale { link.stop() }
    }

    /// Stops every server (the processes they forked run on to their end).
    public func stopAll() {
        let links = state.withLock { state in
            let running = state.servers.values.compactMap { server -> ForkServerLink? in
                if case .running(let link) = server { return link }
                return nil
            }
            state.servers = [:]
            return running
        }
        // Every link closed first, then each server reaped: a second in all, however many there are.
        for link in links { link.closeLink() }
        let deadline = SystemClock.monotonicNanoseconds() + 1_000_000_000
        for link in links { link.reap(until: deadline) }
    }
}
