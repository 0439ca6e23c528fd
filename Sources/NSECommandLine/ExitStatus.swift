/// nse's exit statuses (sysexits.h), documented in docs/cli.md.
public enum ExitStatus: Int32, Sendable {
    /// Any outcome a device could show: rewritten, fallback, original, suppressed, not-invoked.
    case ok = 0
    /// Bad command-line usage.
    case usage = 64
    /// The payload was rejected (the result is still printed).
    case rejected = 65
    /// An input file does not exist or cannot be read.
    case noInput = 66
    /// A program nse needs is missing or cannot run: a half-installed nse (`nse-extension` or `nse-tool` not beside
    /// `nse`), or an extension that cannot be started. Never a device's outcome, so CI cannot pass on it.
    case unavailable = 69
    /// An internal error.
    case software = 70
    /// Reading or writing failed (a registrar that refuses or does not answer included).
    case ioError = 74
    /// Busy: try again later (`nse app` for a device whose main app already runs).
    case tempFail = 75
    /// The device or configuration is missing, invalid or unsafe.
    case config = 78
}
