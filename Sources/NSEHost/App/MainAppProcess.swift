public import NSEJSON
import NSEProtocol
public import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `nse app DIR` as a child process, for `nse replay`'s app steps: the main app comes to the foreground when it
/// starts, goes to the background on ``background(timeout:)`` (SIGTERM, as a user would stop it), or dies on
/// ``kill()``. Its event lines (docs/app.md) are read as they come.
public final class MainAppProcess: @unchecked Sendable {
    private let child: ChildProcess
    /// Every event line read so far.
    public private(set) var events: [JSON] = []

    /// The process's pid.
    public var pid: Int32 { child.pid }

    private init(child: ChildProcess) { self.child = child }

    /// Starts `nse app` for the device at `directory`: `$NSE_TOOL`, else `nse-tool` (this executable, or the one
    /// beside it).
    public static func start(device directory: String) throws(SystemError) -> MainAppProcess {
        try MainAppProcess(
            child: ChildProcess.spawn(ChildProcess.sibling("nse-tool", overriddenBy: "NSE_TOOL") + ["app", directory]))
    }

    /// Reads event lines until one named `name` comes (returned) or `timeout` seconds pass (nil).
    public func waitFor(_ name: String, timeout: Double) -> JSON? {
        let end = SystemClock.monotonicNanoseconds() + UInt64(max(timeout, 0) * 1e9)
        if let seen = events.first(where: { $0["event"]?.stringValue == name }) { return seen }
        while SystemClock.monotonicNanoseconds() < end {
            let left = Int32(max(1, (end - min(end, SystemClock.monotonicNanoseconds())) / 1_000_000))
            guard case .line(let line) = (try? child.channel.receive(timeoutMilliseconds: left)) ?? .timedOut else {
                return nil
            }
            guard let event = try? JSON.parse(line) else { continue }
            events.append(event)
            if event["event"]?.stringValue == name { return event }
        }
        return nil
    }

    /// SIGTERM: the app goes to the background. Waits up to `timeout` seconds for it to exit (then kills it); its
    /// exit status, nil when it had to be killed.
    @discardableResult
    public func background(timeout: Double) -> Int32? {
        child.signalGroup(SIGTERM)
        let end = SystemClock.monotonicNanoseconds() + UInt64(timeout * 1e9)
        while SystemClock.monotonicNanoseconds() < end {
            switch (try? child.channel.receive(timeoutMilliseconds: 50)) ?? .timedOut {
            case .line(let line):
                if let event = try? JSON.parse(line) { events.append(event) }
            case .timedOut:
                if let exit = child.reap(blocking: false) { return exit.exitCode }
            case .closed:
                // Its stdout is closed: it is exiting.
                if let exit = child.reap(blocking: false) { return exit.exitCode }
                usleep(5000)
            }
        }
        child.killAndReap()
        return nil
    }

    /// SIGKILL: the app dies without releasing anything (a crash).
    public func kill() {
        child.killAndReap()
    }
}
