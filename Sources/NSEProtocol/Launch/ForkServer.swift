import CForkServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An extension's side of launching by fork (`--extension-launch fork`, docs/protocol.md "Launching by fork"): the
/// host starts the extension once with ``environmentVariable`` naming a socket; the process does its one-time work
/// (``serveIfAsked(warmUp:)``'s `warmUp`: the runtime's type metadata, libsodium's CPU probe), then forks a fresh
/// process for each push, which goes on from here as a process the host had just exec'd.
public enum ForkServer {
    /// The descriptor of the link to the host, when the host asks for a fork server.
    public static let environmentVariable = "NSE_FORK_SERVER"

    /// Returns at once when the host did not ask for a fork server. Else runs `warmUp`, then serves: it returns in
    /// each forked child (its stdin, stdout and stderr the push's pipes, its environment the push's), and the server
    /// itself exits once the host closes the link. `warmUp` must leave the process with one thread: fork() copies
    /// only the calling one, and the server refuses to fork beside others (the host then execs each process).
    public static func serveIfAsked(warmUp: () -> Void) {
        guard let value = getenv(environmentVariable), let link = Int32(String(cString: value)), link >= 3 else {
            return
        }
        unsetenv(environmentVariable)
        warmUp()
        if nse_fork_server_run(link) != 0 {
            // The host was told why, and execs each process instead: this one has nothing to do.
            exit(0)
        }
    }
}
