import NSEProtocol
import NSESystem
import Synchronization

/// Extension processes kept warm between pushes (`--extension-process warm`), as iOS keeps an extension's process
/// for the next notifications: one per device and extension, handed each new request (a new instance per push), and
/// evicted, as iOS does, by a kill once it has been idle for ``idleTime`` or when it is found dead.
///
/// A process is checked out for one request at a time: a push for the same device while its process is busy gets a
/// fresh process of its own, ended after its request (the pool keeps one per device).
public final class ExtensionProcessPool: Sendable {
    /// How long an idle process is kept, in seconds (iOS: about 30 minutes).
    public let idleTime: Double
    private let idle = Mutex(Idle())

    /// The idle processes, and when the next look for those idle too long is due.
    private struct Idle {
        var processes: [Key: WarmProcess] = [:]
        /// Monotonic nanoseconds. Each push looked at every idle process before: with a process per device that
        /// was a copy of the whole table per push (0.3 % of a 600-device warm run's samples, growing with devices).
        var nextSweep: UInt64 = 0
    }

    public static let defaultIdleTime = 1800.0

    /// How a host runs extension processes (`--extension-process`).
    public enum Mode: String, Sendable, CaseIterable {
        /// A new process for every push.
        case fresh
        /// One process per device, kept between pushes while it is idle for less than the idle time.
        case warm
    }

    /// The pool for `mode`: none for `fresh`.
    public static func make(_ mode: Mode, idleTime: Double) -> ExtensionProcessPool? {
        mode == .warm ? ExtensionProcessPool(idleTime: idleTime) : nil
    }

    public init(idleTime: Double = ExtensionProcessPool.defaultIdleTime) {
        self.idleTime = idleTime
    }

    /// Whose process it is: a device's container and the extension's command line.
    struct Key: Hashable {
        var container: String
        var command: [String]
    }

    /// A process between two requests, with what the pool knows of it.
    final class WarmProcess: @unchecked Sendable {
        let child: ChildProcess
        /// What it said when it started.
        let hello: ExtensionHello
        /// The requests it has been sent, the current one included once it is checked out.
        var pushes: Int
        /// When it said `ready` last (monotonic nanoseconds).
        var idleSince: UInt64

        init(child: ChildProcess, hello: ExtensionHello, pushes: Int, idleSince: UInt64) {
            self.child = child
            self.hello = hello
            self.pushes = pushes
            self.idleSince = idleSince
        }
    }

    /// Takes the idle process for `key`, if one is alive and has not been idle too long; the processes idle for longer
    /// than ``idleTime`` are evicted on the way. Evicted and dead processes are reaped by their last reference.
    func checkOut(_ key: Key, now: UInt64 = SystemClock.monotonicNanoseconds()) -> WarmProcess? {
        let (taken, evicted) = idle.withLock { idle -> (WarmProcess?, [WarmProcess]) in
            let limit = ExtensionLimits.nanoseconds(idleTime)
            var evicted: [WarmProcess] = []
            // The others' idle time is checked at most every eighth of it (a second at most): an eviction is a
            // little late, never wrong; the process asked for is checked exactly.
            if now >= idle.nextSweep {
                let stale = idle.processes.compactMap { now &- $0.value.idleSince >= limit ? $0.key : nil }
                for key in stale { idle.processes.removeValue(forKey: key).map { evicted.append($0) } }
                idle.nextSweep = now &+ min(limit / 8, 1_000_000_000)
            }
            guard let process = idle.processes.removeValue(forKey: key) else { return (nil, evicted) }
            guard now &- process.idleSince < limit else { return (nil, evicted + [process]) }
            return (process, evicted)
        }
        for process in evicted { Self.evict(process) }
        guard let taken else { return nil }
        // One that died while idle (killed from outside, or it exited) cannot serve: the push starts a fresh one.
        guard taken.child.reap(blocking: false) == nil else { return nil }
        return taken
    }

    /// Puts a process that said `ready` back as `key`'s idle process; one already there (a concurrent push's)
    /// stays, and this one is ended.
    func checkIn(_ process: WarmProcess, as key: Key, now: UInt64 = SystemClock.monotonicNanoseconds()) {
        process.idleSince = now
        let refused = idle.withLock { idle -> WarmProcess? in
            guard idle.processes[key] == nil else { return process }
            idle.processes[key] = process
            return nil
        }
        if let refused { Self.evict(refused) }
    }

    /// Ends every idle process (the host is stopping): each is killed with its group and reaped.
    public func evictAll() {
        let all = idle.withLock { idle -> [WarmProcess] in
            defer { idle.processes.removeAll() }
            return Array(idle.processes.values)
        }
        for process in all { Self.evict(process) }
    }

    /// Ends the idle processes of the devices whose containers are `containers` (devices this host serves no more).
    public func evict(containers: Set<String>) {
        let gone = idle.withLock { idle -> [WarmProcess] in
            let keys = idle.processes.keys.filter { containers.contains($0.container) }
            return keys.compactMap { idle.processes.removeValue(forKey: $0) }
        }
        for process in gone { Self.evict(process) }
    }

    /// As iOS evicts an extension's process: it is killed with its process group (it is idle, nothing is lost) and
    /// reaped.
    private static func evict(_ process: WarmProcess) {
        process.child.killAndReap()
    }

    deinit { evictAll() }
}
