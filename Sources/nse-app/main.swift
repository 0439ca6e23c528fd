import Logging
import NSECall
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// `nse-app`: the emulated app's process for one call, started by the host once the app reported the call to
// CallKit (docs/voip.md). Its stdout is the host's: logs go to stderr.
signal(SIGPIPE, SIG_IGN)
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = Environment.get("NSE_LOG_LEVEL").flatMap(Logger.Level.init(rawValue:)) ?? .warning
    return handler
}
// The process's one logger, made once logging is bootstrapped; the library takes it, never makes its own.
exit(await AppCallProcess.main(logger: Logger(label: "nse.app")))
