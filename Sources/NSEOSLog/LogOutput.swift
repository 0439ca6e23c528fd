import NSESystem

/// Where every message goes: one line on standard error (NSEOSLog.swift gives the format), written by one `write` so lines
/// from concurrent threads do not mix, and only for levels at or above `NSE_OSLOG_LEVEL`.
enum LogOutput {
    /// The lowest level written, read from `NSE_OSLOG_LEVEL` once, on the first message.
    static let threshold: OSLogType = {
        guard let value = Environment.get("NSE_OSLOG_LEVEL") else { return .default }
        if let level = OSLogType(levelName: value) { return level }
        StandardStreams.writeError(
            "os: NSE_OSLOG_LEVEL=\(Text.oneLine(value)) is not debug, info, default, error or fault; using default\n")
        return .default
    }()

    /// Whether a message of `type` on `log` would be written.
    static func isEnabled(_ log: OSLog, _ type: OSLogType) -> Bool {
        log.isWritten && type.severity >= threshold.severity
    }

    /// Writes `message` as one line. The caller has checked `isEnabled` before formatting it.
    static func write(_ message: String, log: OSLog, type: OSLogType) {
        let source = "\(field(log.subsystem))/\(field(log.category))"
        StandardStreams.writeError("\(source) \(type.name): \(Text.oneLine(message))\n")
    }

    private static func field(_ text: String) -> String {
        let line = Text.oneLine(text)
        return line.isEmpty ? "-" : line
    }
}
