/// Apple's `Logger` (iOS 14): writes messages built from string interpolations with per-value privacy.
///
/// Each method takes an `OSLogMessage` only, as on Apple: `logger.info("got \(n) items")` compiles,
/// `logger.info(someString)` does not (write `logger.info("\(someString, privacy: .public)")`). A message's
/// interpolated values are evaluated only when its level is written (`NSE_OSLOG_LEVEL`, NSEOSLog.swift). Each method's
/// documentation names the level Apple stores, which is what nse prints.
public struct Logger: Sendable {
    let logObject: OSLog

    /// A logger for `subsystem` (by convention the extension's bundle identifier) and `category`.
    public init(subsystem: String, category: String) {
        logObject = OSLog(subsystem: subsystem, category: category)
    }

    /// A logger on `OSLog.default`: no subsystem, no category (printed `-/-`).
    public init() {
        logObject = .default
    }

    /// A logger writing through an existing handle (`OSLog.disabled` silences it).
    public init(_ logObj: OSLog) {
        logObject = logObj
    }

    /// Level `default`.
    public func log(_ message: OSLogMessage) { write(message, .default) }

    /// Level `level`.
    public func log(level: OSLogType, _ message: OSLogMessage) { write(message, level) }

    /// Level `debug`.
    public func trace(_ message: OSLogMessage) { write(message, .debug) }

    /// Level `debug`.
    public func debug(_ message: OSLogMessage) { write(message, .debug) }

    /// Level `info`.
    public func info(_ message: OSLogMessage) { write(message, .info) }

    /// Level `default`.
    public func notice(_ message: OSLogMessage) { write(message, .default) }

    /// Level `error`.
    public func warning(_ message: OSLogMessage) { write(message, .error) }

    /// Level `error`.
    public func error(_ message: OSLogMessage) { write(message, .error) }

    /// Level `fault`.
    public func critical(_ message: OSLogMessage) { write(message, .fault) }

    /// Level `fault`.
    public func fault(_ message: OSLogMessage) { write(message, .fault) }

    private func write(_ message: OSLogMessage, _ type: OSLogType) {
        guard logObject.isEnabled(type: type) else { return }
        LogOutput.write(message.interpolation.render(), log: logObject, type: type)
    }
}
