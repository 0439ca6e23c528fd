import CForkServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An extension's side of launching by fork (`--extension-launch fork`, docs/protocol.md "Launching by fork"): the
/// host starts the extension once with ``environmentVariable`` naming a socket; the process does its one-time work
/// (``serveIfAsked(environmentAtStart:warmUp:)``'s `warmUp`: the runtime's type metadata, libsodium's CPU probe), then forks a fresh
/// process for each push, which goes on from here as a process the host had just exec'd.
public enum ForkServer {
    /// The descriptor of the link to the host, when the host asks for a fork server. Also how the host tells a binary
    /// that has one: these bytes are in it (longer than 15, so never one of Swift's inline small strings).
    public static let environmentVariable = "NSE_EXTENSION_FORK_SERVER"

    /// Returns at once when the host did not ask for a fork server. Else runs `warmUp`, then serves: it returns in
    /// each forked child (its stdin, stdout and stderr the push's pipes, its environment the push's), and the server
    /// itself exits once the host closes the link. `warmUp` must leave the process with one thread: fork() copies
    /// only the calling one, and the server refuses to fork beside others (the host then execs each process).
    ///
    /// `environmentAtStart`: the process reads its environment as it starts (Foundation does, for the folder of its
    /// preferences), so what a push sets in its process's environment would come too late; the host then starts a
    /// fork server per environment (one per device), started with it.
    public static func serveIfAsked(environmentAtStart: Bool = false, warmUp: () -> Void) {
        guard let value = getenv(environmentVariable), let link = Int32(String(cString: value)), link >= 3 else {
            return
        }
        unsetenv(environmentVariable)
        warmUp()
        if nse_fork_server_run(link, environmentAtStart ? Int32(NSE_FORK_ENVIRONMENT_AT_START) : 0) != 0 {
            // The host was told why, and execs each process instead: this one has nothing to do.
            exit(0)
        }
    }
}
