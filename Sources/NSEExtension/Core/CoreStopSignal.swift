import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The main app's request to stop the extension's core, as it arrives: SIGUSR1 to the process (the Linux stand-in
/// for the Darwin notification liblinphone's main app posts). Installed once per process, whatever number of
/// requests the process serves; the fetch running at the time (if any) hears it through its handler, and a signal
/// with no fetch running is ignored.
enum CoreStopSignal {
    /// The process's one signal source (made on first use), and the handler of the fetch that holds the core now.
    private struct Listening {
        var source: (any DispatchSourceSignal)?
        var handler: (@Sendable () -> Void)?
    }
    private static let listening = Mutex(Listening())

    /// Calls `stop` when the main app asks this process to stop its core, until ``clear()``.
    static func onStop(_ stop: @escaping @Sendable () -> Void) {
        listening.withLock { listening in
            if listening.source == nil {
                signal(SIGUSR1, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: SIGUSR1)
                source.setEventHandler { CoreStopSignal.listening.withLock { $0.handler }?() }
                source.resume()
                listening.source = source
            }
            listening.handler = stop
        }
    }

    static func clear() {
        listening.withLock { $0.handler = nil }
    }

    /// Wakes a process waiting for this one (the main app, once this extension has stopped its core).
    static func wake(_ pid: Int32) {
        kill(pid, SIGUSR1)
    }
}
