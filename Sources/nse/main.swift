import NSECommandLine
import NSESystem

// `nse`: the front door. `nse run` (the per-push hot path) runs here, in a small executable that links the host
// and nothing else, so it starts in a few milliseconds; every other command, help, and any `run` whose arguments
// need explaining are the full command line's, `nse-tool` beside this binary, which takes over this process (exec).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

signal(SIGPIPE, SIG_IGN)
let arguments = CommandLine.arguments
if arguments.count >= 2, arguments[1] == "run", let options = RunArguments.parse(Array(arguments.dropFirst(2))) {
    exit(options.execute().rawValue)
}

let directory = FileSystem.executablePath().map(Path.dirname) ?? "."
let tool = Path.join(directory, "nse-tool")
var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
execv(tool, &argv)
StandardStreams.writeError(
    "nse: cannot run \(tool): \(String(cString: strerror(errno))) (nse-tool must sit beside nse)\n")
exit(ExitStatus.unavailable.rawValue)
