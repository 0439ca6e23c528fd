import ArgumentParser
import Logging
import NSECommandLine
import NSEHost
import NSESIP
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// `nse`: a Linux emulator of the iOS Notification Service Extension path.
@main
struct NSE: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nse",
        abstract:
            "Run iOS Notification Service Extension pushes on Linux: one extension process per notification, under iOS's rules.",
        discussion:
            "Exit status: 0 any outcome a device could show, 64 usage, 65 payload rejected, 66 input missing, 69 nse not installed whole, 74 I/O error, 75 busy, 78 device or configuration problem.",
        version: NSEVersion.current,
        subcommands: [
            RunCommand.self, SealCommand.self, DeviceCommand.self, SendCommand.self, CallCommand.self, RoomCommand.self,
            SIPServerCommand.self,
            ReplayCommand.self, ServeCommand.self, FilesCommand.self, PushCommand.self, AppCommand.self,
            KeysCommand.self, ExtensionCommand.self,
        ]
    )

    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Environment.get("NSE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .warning
            return handler
        }
        do {
            var command = try parseAsRoot()
            // `nse sip-server`: every task on the server's one event-loop thread, where its sockets are (a request is
            // a chain of short steps between the loop and the server's actor), set before any task starts.
            if let server = command as? SIPServerCommand, server.runsOnOneThread { EventLoopGlobalExecutor.install() }
            // `nse run` is the hot path: call it without the existential cast below, which makes the runtime scan
            // every protocol conformance in the binary (several milliseconds with NIO linked).
            if let run = command as? RunCommand {
                try run.run()
            } else if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error)
        }
    }

    /// Ends the process for `error` as docs/cli.md promises: help and version on stdout with status 0; a command's
    /// own failure (already reported on one line) with its status; anything the parser or a `validate()` refused as
    /// one line `nse: <problem>` on stderr with status 64 (swift-argument-parser would add a help line and the
    /// usage); any other error as one line with status 70.
    static func exit(reporting error: any Error) -> Never {
        let status = exitCode(for: error)
        if status == .success || error is ExitCode { exit(withError: error) }
        let problem = message(for: error).split(whereSeparator: \.isNewline)
            .map { $0.drop(while: \.isWhitespace) }.filter { !$0.isEmpty }.joined(separator: "; ")
        StandardStreams.writeError("nse: \(NotificationResult.terminalSafe(problem.isEmpty ? "\(error)" : problem))\n")
        Glibc.exit(status == .validationFailure ? ExitStatus.usage.rawValue : ExitStatus.software.rawValue)
    }
}
