#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Processes of this machine, by pid.
public enum Processes {
    /// This process's pid.
    public static var current: Int32 { getpid() }

    /// Whether `pid` names a process that still runs: one that exists and is not a zombie waiting for its parent
    /// (a process killed a moment ago stays a zombie until its parent reaps it). A pid that cannot be checked (another
    /// user's process) counts as running.
    public static func isRunning(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 && errno == ESRCH { return false }
        // "/proc/PID/stat" is "PID (COMM) STATE …"; the command may hold spaces and parentheses, the state follows
        // the last ')'.
        guard let stat = try? FileSystem.readText("/proc/\(pid)/stat", limit: 4096),
            let close = stat.lastIndex(of: ")")
        else { return true }
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        return state != "Z" && state != "X"
    }
}
