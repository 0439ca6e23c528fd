import NSESystem
import Synchronization

/// Fresh extension processes forked instead of exec'd (`--extension-launch fork`): one fork server per extension
/// command, started on its first push, forks each push's process (``ForkServerLink``).
///
/// Still a process per push, as iOS runs one, that no earlier push ran in; what is saved is the exec and the
/// runtime's one-time work (the binary mapped, type metadata built on first use, libsodium's CPU probe), done once
/// in the server. A command whose binary has no fork server (an extension of the host/extension protocol that is
/// neither nse's nor built against the SDK) runs by exec, as without the option; so does every push while a server
/// starts, and for a minute after one could not.
public final class ExtensionForkServers: Sendable {
    private enum Server {
        case starting
        case running(ForkServerLink)
        /// Not started (no fork server in the binary, or it failed); tried again after the monotonic time.
        case unavailable(until: UInt64)
    }

    private let servers = Mutex<[[String]: Server]>([:])
    private let onProblem: @Sendable (String) -> Void
    /// How long a server may take to start (its warm-up included).
    static let startTimeout = 5.0
    /// How long a command runs by exec after its server could not start.
    static let retryAfter: UInt64 = 60_000_000_000

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
            case start
            case exec
        }
        let next: Next = servers.withLock { servers in
            switch servers[command] {
            case .running(let link)? where !link.isGone: return .fork(link)
            case .starting?: return .exec
            case .unavailable(let until)? where now < until: return .exec
            default:
                servers[command] = .starting
                return .start
            }
        }
        let link: ForkServerLink
        switch next {
        case .exec: return nil
        case .fork(let running): link = running
        case .start:
            switch ForkServerLink.start(command, environment: [:], timeout: Self.startTimeout) {
            case .success(let started):
                servers.withLock { $0[command] = .running(started) }
                link = started
            case .failure(let failure):
                servers.withLock { $0[command] = .unavailable(until: now + Self.retryAfter) }
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

    /// A server that died: reaped, and started again on the next push.
    private func restart(_ link: ForkServerLink) {
        let stale = servers.withLock { servers in
            guard case .running(let current)? = servers[link.command], current === link else { return false }
            servers[link.command] = nil
            return true
        }
        if stale { link.stop() }
    }

    /// Stops every server (the processes they forked run on to their end).
    public func stopAll() {
        let links = servers.withLock { servers in
            let running = servers.values.compactMap { server -> ForkServerLink? in
                if case .running(let link) = server { return link }
                return nil
            }
            servers = [:]
            return running
        }
        for link in links { link.stop() }
    }
}
