import ArgumentParser
import NSECommandLine
import NSEHost

/// `--extension-process fresh|warm`, `--extension-launch exec|fork` and `--warm-idle`, for the commands that deliver more than one push (`nse run`
/// with several payloads, `nse serve`, `nse replay`).
struct ExtensionProcessOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "fresh: a new extension process for every push; warm: one process per device kept between pushes (as iOS keeps it), for extensions that say they serve several requests (docs/protocol.md).",
            valueName: "fresh|warm"))
    var extensionProcess: String = "fresh"

    @Option(
        help: ArgumentHelp(
            "exec: each fresh extension process exec'd; fork: forked from one prepared process of the extension, no exec per push (docs/protocol.md, \"Launching by fork\").",
            valueName: "exec|fork"))
    var extensionLaunch: String = "exec"

    // Numbers take the next argument whatever it looks like, so that `--warm-idle -1` is judged by validate().
    @Option(parsing: .unconditional, help: "Seconds a warm extension process may stay idle before it is evicted.")
    var warmIdle: Double = RunLimits.warmIdle.defaultValue

    func validate() throws {
        guard ExtensionProcessPool.Mode(rawValue: extensionProcess) != nil else {
            throw ValidationError("--extension-process must be fresh or warm")
        }
        guard ExtensionForkServers.Launch(rawValue: extensionLaunch) != nil else {
            throw ValidationError("--extension-launch must be exec or fork")
        }
        guard RunLimits.warmIdle.accepts(warmIdle) else { throw ValidationError(RunLimits.warmIdle.requirement) }
    }

    var mode: ExtensionProcessPool.Mode { ExtensionProcessPool.Mode(rawValue: extensionProcess) ?? .fresh }

    /// The pool the options ask for: none for `fresh`.
    func pool() -> ExtensionProcessPool? { ExtensionProcessPool.make(mode, idleTime: warmIdle) }

    /// The fork servers the options ask for: none for `exec`. `onProblem` hears why a command's processes are exec'd
    /// after all.
    func forkServers(onProblem: @escaping @Sendable (String) -> Void) -> ExtensionForkServers? {
        ExtensionForkServers.make(launch, onProblem: onProblem)
    }

    var launch: ExtensionForkServers.Launch { ExtensionForkServers.Launch(rawValue: extensionLaunch) ?? .exec }
}
