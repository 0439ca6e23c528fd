/// One numeric option of `nse run` and the values it takes.
public struct RunLimit: Sendable {
    /// The option's name, with its dashes.
    public let option: String
    public let lowerBound: Int
    public let upperBound: Int
    /// Whether the lower bound itself is refused (a budget of 0 s means nothing).
    public let excludesLowerBound: Bool
    public let unit: String
    public let defaultValue: Double

    /// Whether `value` is in range (a finite number).
    public func accepts(_ value: Double) -> Bool {
        value.isFinite && value <= Double(upperBound)
            && (excludesLowerBound ? value > Double(lowerBound) : value >= Double(lowerBound))
    }

    /// The one-line usage error for a value out of range.
    public var requirement: String {
        excludesLowerBound
            ? "\(option) must be more than \(lowerBound) and at most \(upperBound) \(unit)"
            : "\(option) must be between \(lowerBound) and \(upperBound) \(unit)"
    }
}

/// `nse run`'s limits: the one table read by both front doors' parsers (the hand parser in `nse` and
/// swift-argument-parser's in `nse-tool`), so they accept exactly the same values.
public enum RunLimits {
    /// Seconds before `serviceExtensionTimeWillExpire`.
    public static let budget = RunLimit(
        option: "--budget", lowerBound: 0, upperBound: 3600, excludesLowerBound: true, unit: "seconds", defaultValue: 30
    )
    /// Seconds after the expiry notice before the extension is killed.
    public static let grace = RunLimit(
        option: "--grace", lowerBound: 0, upperBound: 60, excludesLowerBound: false, unit: "seconds", defaultValue: 1)
    /// The extension's peak memory, in MB.
    public static let memoryLimit = RunLimit(
        option: "--memory-limit", lowerBound: 0, upperBound: 4096, excludesLowerBound: true, unit: "MB",
        defaultValue: 24)
    /// Seconds a warm extension process may stay idle before it is evicted (`--extension-process warm`).
    public static let warmIdle = RunLimit(
        option: "--warm-idle", lowerBound: 0, upperBound: 86400, excludesLowerBound: true, unit: "seconds",
        defaultValue: 1800)
}
