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

    /// Raises this process's soft limit on open descriptors towards `wanted`, as far as the hard limit lets it (a
    /// server's usual first step: the soft limit is often 1024); returns the soft limit now in force.
    @discardableResult
    public static func raiseDescriptorLimit(to wanted: Int) -> Int {
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        let target = rlim_t(max(0, wanted))
        if limit.rlim_cur < target {
            var raised = limit
            raised.rlim_cur = min(target, limit.rlim_max)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}
