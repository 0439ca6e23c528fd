import NSEDatabase
public import NSESystem

/// Who runs the SIP core of the app right now, in the App Group store: liblinphone's "shared core". The main app and
/// its extension share the container, but only one core may run at a time, and the main app's has priority:
/// - an extension (the *executor*) starts its core only while the main app's is not running;
/// - the main app coming to the foreground asks every running executor to stop (they go *stopping*, and *stopped*
///   once they have), waits up to ``takeOverMilliseconds`` for them, then takes the core whatever they do;
/// - a holder whose heartbeat is older than the watchdog (a crashed or killed process) is cleared by the next
///   reader or writer, as liblinphone's watchdog clears a state not refreshed for 30 s.
///
/// Each holder is a row (its pid, role, state and last heartbeat), so that extension processes running at once each
/// hold their own claim; ``state(now:)`` reads them as liblinphone's five states.
public struct SharedCore: Sendable {
    /// liblinphone's `ACTIVE_SHARED_CORE` values.
    public enum State: String, Sendable, Equatable {
        case none = "none"
        case mainStarted = "main-started"
        case executorStarted = "executor-started"
        case executorStopping = "executor-stopping"
        case executorStopped = "executor-stopped"
    }

    /// What an extension that wants to start its core is told.
    public enum ExecutorStart: Sendable, Equatable {
        /// It holds the core (as an executor) until ``releaseExecutor(pid:)``.
        case started
        /// The main app's core runs (or is taking over): the extension cannot start its own.
        case mainCoreRunning
    }

    /// What the main app coming to the foreground finds.
    public enum Foreground: Sendable, Equatable {
        /// No executor runs: the app holds the core.
        case started
        /// These extension processes hold the core: each is now asked to stop; the app waits for them.
        case waitingFor([Int32])
        /// Another app process holds the main core.
        case mainCoreHeld(by: Int32)
    }

    let database: Database
    /// A holder not refreshed for this long is cleared (liblinphone: 30 s).
    public var watchdogMilliseconds: Int64
    /// How long the main app waits for stopping executors before it takes the core anyway (liblinphone: 30 × 100 ms).
    public static let takeOverMilliseconds: Int64 = 3000

    init(database: Database, watchdogMilliseconds: Int64 = 30_000) {
        self.database = database
        self.watchdogMilliseconds = watchdogMilliseconds
    }

    /// The shared core's state, after clearing stale holders.
    public func state(now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> State {
        try write { tx throws(DatabaseError) -> State in
            try clearStale(tx, now: now)
            return try Self.state(tx)
        }
    }

    /// An extension process asks to start its core.
    public func startExecutor(pid: Int32 = Processes.current, now: Int64 = SystemClock.unixMilliseconds())
        throws(DeviceError) -> ExecutorStart
    {
        try write { tx throws(DatabaseError) -> ExecutorStart in
            try clearStale(tx, now: now)
            guard try tx.execute("SELECT 1 FROM core_holders WHERE role = 'main'").isEmpty else {
                return .mainCoreRunning
            }
            try tx.execute(
                """
                INSERT INTO core_holders (pid, role, state, heartbeat_at) VALUES (?, 'executor', 'started', ?)
                ON CONFLICT (pid) DO UPDATE SET role = 'executor', state = 'started', heartbeat_at = excluded.heartbeat_at
                """, [.integer(Int64(pid)), .integer(now)])
            return .started
        }
    }

    /// Whether the main app has asked this executor to stop.
    public func isStopRequested(pid: Int32 = Processes.current) throws(DeviceError) -> Bool {
        do {
            return try !database.execute(
                "SELECT 1 FROM core_holders WHERE pid = ? AND role = 'executor' AND state = 'stopping'",
                [.integer(Int64(pid))]
            ).isEmpty
        } catch {
            throw error.deviceError
        }
    }

    /// An extension process has stopped its core. One the main app asked to stop stays as *stopped* for the app to
    /// see; the pid of the app waiting for it, if any, is returned (to be woken). Otherwise its claim is removed.
    @discardableResult
    public func releaseExecutor(pid: Int32 = Processes.current) throws(DeviceError) -> Int32? {
        try write { tx throws(DatabaseError) -> Int32? in
            let asked = try tx.execute(
                "SELECT 1 FROM core_holders WHERE pid = ? AND role = 'executor' AND state = 'stopping'",
                [.integer(Int64(pid))])
            guard !asked.isEmpty else {
                try tx.execute("DELETE FROM core_holders WHERE pid = ? AND role = 'executor'", [.integer(Int64(pid))])
                return nil
            }
            try tx.execute("UPDATE core_holders SET state = 'stopped' WHERE pid = ?", [.integer(Int64(pid))])
            return try tx.execute("SELECT pid FROM core_holders WHERE role = 'main'").first?.integer(0).map {
                Int32(truncatingIfNeeded: $0)
            }
        }
    }

    /// The main app comes to the foreground: it takes the core at once when no executor runs; otherwise every
    /// running executor is asked to stop and the app waits (its own claim is *waiting* meanwhile, so that no new
    /// extension starts its core).
    public func comeToForeground(pid: Int32 = Processes.current, now: Int64 = SystemClock.unixMilliseconds())
        throws(DeviceError) -> Foreground
    {
        try write { tx throws(DatabaseError) -> Foreground in
            try clearStale(tx, now: now)
            if let other = try tx.execute(
                "SELECT pid FROM core_holders WHERE role = 'main' AND pid != ?",
                [
                    .integer(Int64(pid))
                ]
            ).first?.integer(0) {
                return .mainCoreHeld(by: Int32(truncatingIfNeeded: other))
            }
            try tx.execute(
                "UPDATE core_holders SET state = 'stopping' WHERE role = 'executor' AND state = 'started'")
            let running = try tx.execute(
                "SELECT pid FROM core_holders WHERE role = 'executor' AND state = 'stopping' ORDER BY pid"
            ).compactMap { $0.integer(0).map { Int32(truncatingIfNeeded: $0) } }
            try tx.execute(
                """
                INSERT INTO core_holders (pid, role, state, heartbeat_at) VALUES (?, 'main', ?, ?)
                ON CONFLICT (pid) DO UPDATE SET role = 'main', state = excluded.state, heartbeat_at = excluded.heartbeat_at
                """, [.integer(Int64(pid)), .text(running.isEmpty ? "started" : "waiting"), .integer(now)])
            if running.isEmpty { try tx.execute("DELETE FROM core_holders WHERE role = 'executor'") }
            return running.isEmpty ? .started : .waitingFor(running)
        }
    }

    /// The executors the main app still waits for (asked to stop, not stopped yet, not cleared by the watchdog).
    public func stoppingExecutors(now: Int64 = SystemClock.unixMilliseconds()) throws(DeviceError) -> [Int32] {
        try write { tx throws(DatabaseError) -> [Int32] in
            try clearStale(tx, now: now)
            return try tx.execute("SELECT pid FROM core_holders WHERE role = 'executor' AND state = 'stopping'")
                .compactMap { $0.integer(0).map { Int32(truncatingIfNeeded: $0) } }
        }
    }

    /// The main app takes the core: every executor claim goes (stopped, or given up on after the wait).
    public func takeMainCore(pid: Int32 = Processes.current, now: Int64 = SystemClock.unixMilliseconds())
        throws(DeviceError)
    {
        try write { tx throws(DatabaseError) in
            try tx.execute("DELETE FROM core_holders WHERE role = 'executor'")
            try tx.execute(
                """
                INSERT INTO core_holders (pid, role, state, heartbeat_at) VALUES (?, 'main', 'started', ?)
                ON CONFLICT (pid) DO UPDATE SET role = 'main', state = 'started', heartbeat_at = excluded.heartbeat_at
                """, [.integer(Int64(pid)), .integer(now)])
        }
    }

    /// A holder says it is alive.
    public func heartbeat(pid: Int32 = Processes.current, now: Int64 = SystemClock.unixMilliseconds())
        throws(DeviceError)
    {
        try write { tx throws(DatabaseError) in
            try tx.execute(
                "UPDATE core_holders SET heartbeat_at = ? WHERE pid = ?", [.integer(now), .integer(Int64(pid))])
        }
    }

    /// The main app goes to the background: it stops its core.
    public func leaveForeground(pid: Int32 = Processes.current) throws(DeviceError) {
        try write { tx throws(DatabaseError) in
            try tx.execute("DELETE FROM core_holders WHERE pid = ? AND role = 'main'", [.integer(Int64(pid))])
        }
    }

    // MARK: - Private

    @discardableResult
    private func write<T>(_ body: (borrowing Database.Transaction) throws(DatabaseError) -> T) throws(DeviceError) -> T
    {
        do { return try database.write(.crashSafe, body) } catch { throw error.deviceError }
    }

    /// The watchdog: holders not refreshed within ``watchdogMilliseconds`` are gone.
    private func clearStale(_ tx: borrowing Database.Transaction, now: Int64) throws(DatabaseError) {
        try tx.execute("DELETE FROM core_holders WHERE heartbeat_at < ?", [.integer(now - watchdogMilliseconds)])
    }

    private static func state(_ tx: borrowing Database.Transaction) throws(DatabaseError) -> State {
        let rows = try tx.execute("SELECT role, state FROM core_holders")
        let holders = rows.map { ($0.text(0) ?? "", $0.text(1) ?? "") }
        if holders.contains(where: { $0 == ("main", "started") }) { return .mainStarted }
        if holders.contains(where: { $0.0 == "executor" && $0.1 == "stopping" }) { return .executorStopping }
        if holders.contains(where: { $0.0 == "executor" && $0.1 == "started" }) { return .executorStarted }
        if holders.contains(where: { $0.0 == "executor" && $0.1 == "stopped" }) { return .executorStopped }
        return .none
    }
}
