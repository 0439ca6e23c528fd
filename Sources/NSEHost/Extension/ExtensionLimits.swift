/// The limits iOS puts on one extension run.
public struct ExtensionLimits: Sendable, Equatable {
    /// Time from launch to `serviceExtensionTimeWillExpire`, in seconds (iOS: about 30).
    public var budget: Double
    /// Time after the expiry notice before the process is killed, in seconds.
    public var grace: Double
    /// Footprint allowed (anonymous and swapped memory, as iOS counts it), in kilobytes (iOS's jetsam limit for
    /// NSEs: 24 MB today).
    public var memoryLimitKilobytes: Int
    /// Whether the memory limit is the device's, set for each run from its iOS release and model
    /// (``NSEDevice/IOSVersion/extensionMemoryLimitKilobytes(on:)``); false when one was given (`--memory-limit`).
    public var memoryLimitFollowsDevice: Bool
    /// Time a freshly started process has to answer (any line), in seconds; nil: no limit. iOS before 12 killed an
    /// extension that took more than 1 s to start (``NSEDevice/IOSVersion/extensionStartLimit``).
    public var startTime: Double?

    /// `memoryLimitKilobytes` nil: the device's.
    public init(budget: Double = 30, grace: Double = 1, memoryLimitKilobytes: Int? = nil) {
        self.budget = budget
        self.grace = grace
        self.memoryLimitKilobytes = memoryLimitKilobytes ?? 24 * 1024
        memoryLimitFollowsDevice = memoryLimitKilobytes == nil
    }

    /// How long an extension may keep running once its content is in (it should exit on end of file), in seconds.
    /// Long enough for what it does after `content-accepted` (the reference extension marks the fetched message
    /// shown, a write that waits its turn behind every other extension writing the same App Group store): a kill in
    /// that moment shows the message again at the next push for it. 250 ms did not hold for 20 extensions at once.
    static let linger = 1.0

    static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(seconds, 0) * 1e9) }
}
