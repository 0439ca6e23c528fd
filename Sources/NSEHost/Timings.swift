import NSESystem

/// The result's `timings_ms`, on one clock started when the push arrives: each step as it ends (`intake`, then
/// `extension` when one ran), and the `total` once the result is made.
struct Timings {
    /// The steps a result times, in the order they come.
    enum Step: String {
        case intake
        /// The extension process's wall time, as the driver measured it (``ExtensionRun/wallMilliseconds``).
        case `extension`
        case total
    }

    /// When the push arrived (monotonic nanoseconds).
    let start: UInt64
    private var steps: [(String, Double)] = []

    init(start: UInt64 = SystemClock.monotonicNanoseconds()) {
        self.start = start
    }

    /// `step` ends now.
    mutating func mark(_ step: Step) {
        steps.append((step.rawValue, SystemClock.millisecondsSince(start)))
    }

    /// `step` took `milliseconds`, measured by whoever ran it.
    mutating func record(_ step: Step, milliseconds: Double) {
        steps.append((step.rawValue, milliseconds))
    }

    /// The steps and the total until now: the result's `timings`.
    func closed() -> [(String, Double)] {
        steps + [(Step.total.rawValue, SystemClock.millisecondsSince(start))]
    }
}
