#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The host process is stopping (`nse serve` on SIGTERM): the children that can outlive a push's budget (the app's
/// process following a call) are asked to end now. A self-pipe: ``begin()`` writes one byte that is never read, so
/// the read end stays readable and every ``ProcessDriver`` that polls it wakes, now or later.
public enum HostShutdown {
    private static let pipeEnds: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard ChildProcess.makePipe(&ends) else { return (-1, -1) }
        return (ends[0], ends[1])
    }()

    /// The descriptor a driver polls: readable once the host is stopping (-1 if the pipe could not be made).
    static var descriptor: Int32 { pipeEnds.read }

    /// Says the host is stopping; idempotent.
    public static func begin() {
        guard pipeEnds.write >= 0 else { return }
        var byte: UInt8 = 1
        _ = write(pipeEnds.write, &byte, 1)
    }
}
