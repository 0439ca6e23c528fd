import ArgumentParser
import Logging
import NSECommandLine
import NSEHost
import NSEJSON
import NSEReplay
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// `nse replay`: a corpus of push scenarios, each run in its own processes, compared with what it expects.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract:
            "Replay push scenario cases (docs/replay.md) and compare what the lock screen shows with what each case expects.",
        discussion: "Exit status 0 when every case passes, 1 when any fails, 65 when a case file is broken.")

    @Argument(
        help: ArgumentHelp(
            "Case files, or folders searched for *.json cases (folders with no case are skipped, with a line).",
            valueName: "path"))
    var paths: [String]

    @OptionGroup var processes: ExtensionProcessOptions

    @Option(help: "Cases run at once (default: the number of cores).")
    var jobs: Int?

    @Option(help: "Run only the cases whose name or file contains this text.")
    var filter: String?

    @Option(help: ArgumentHelp("Write JUnit XML here.", valueName: "file"))
    var junit: String?

    @Flag(help: "Re-record each case's expectations from what happened (and say which changed).")
    var update = false

    @Option(help: "Output: text (a line per case, then the summary) or json.")
    var format: String = "text"

    @Option(
        help: ArgumentHelp(
            "Keep every case's folder (devices, logs) here instead of a temporary folder.", valueName: "dir"))
    var workDir: String?

    @Flag(
        help:
            "Keep the temporary folder with every case's devices and logs (its path is printed on stderr); by default it is removed when the replay ends. --work-dir folders are always kept."
    )
    var keep = false

    func validate() throws {
        guard ["text", "json"].contains(format) else { throw ValidationError("--format must be text or json") }
        if let jobs, jobs < 1 || jobs > 64 { throw ValidationError("--jobs must be between 1 and 64") }
    }

    func run() async throws {
        if let problem = NotificationHost.referenceExtensionProblem() {
            throw Failure(.unavailable, "replay: \(problem)").exit()
        }
        let search: ReplayRunner.CaseSearch
        do { search = try ReplayRunner.findCases(paths) } catch { throw Failure(.noInput, error.description).exit() }
        for line in search.skipped { StandardStreams.writeError(line + "\n") }
        // Unique per run: two replays started in the same millisecond must not share their devices.
        let root =
            workDir
            ?? Path.join(
                Environment.get("TMPDIR") ?? "/tmp", "nse-replay-\(SystemClock.unixMilliseconds())-\(Processes.current)"
            )
        // A temporary folder goes with the replay, pass or fail (tens of MB a run), unless asked to stay.
        let keepRoot = workDir != nil || keep || Environment.get("NSE_KEEP_TEST_DIRS") != nil
        if workDir == nil, keepRoot { StandardStreams.writeError("nse: replay: cases kept in \(root)\n") }
        defer { if !keepRoot { try? FileSystem.removeTree(root) } }
        var runner = ReplayRunner(
            jobs: jobs ?? Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), filter: filter, update: update, workRoot: root,
            extensionCommand: NotificationHost.referenceExtensionCommand(), logger: Logger(label: "nse.replay"))
        // For the cases that do not say (`extension_process`, `warm_idle`).
        runner.extensionProcess = processes.mode
        runner.warmIdle = processes.warmIdle
        runner.extensionLaunch = processes.launch
        let text = format == "text"
        let results = await runner.run(files: search.files) { result in
            if text { StandardStreams.writeOut(ReplayReport.line(result, logsKept: keepRoot) + "\n") }
        }
        if let junit {
            do { try FileSystem.writeAtomically(junit, ReplayReport.junit(results)) } catch {
                throw Failure(.ioError, "--junit: \(error.description)").exit()
            }
        }
        if text {
            if update {
                let changed = results.filter(\.rerecorded).map(\.name)
                StandardStreams.writeOut(
                    changed.isEmpty
                        ? "no expectation changed\n" : "expectations re-recorded: \(changed.joined(separator: ", "))\n")
            }
            StandardStreams.writeOut(ReplayReport.summary(results) + "\n")
        } else {
            StandardStreams.writeOut(ReplayReport.json(results).serialized(.pretty) + "\n")
        }
        if results.contains(where: { $0.error != nil }) { throw ExitCode(ExitStatus.rejected.rawValue) }
        if results.contains(where: { !$0.passed }) && !update { throw ExitCode(1) }
    }
}
