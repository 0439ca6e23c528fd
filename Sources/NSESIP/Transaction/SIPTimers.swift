/// RFC 3261 §17 timer values.
public struct SIPTimers: Sendable, Hashable {
    /// RTT estimate: first retransmission interval (500 ms by default).
    public var t1: Duration
    /// Cap on the retransmission interval of non-INVITE requests (4 s by default).
    public var t2: Duration

    /// Creates timer values.
    public init(t1: Duration = .milliseconds(500), t2: Duration = .seconds(4)) {
        self.t1 = t1
        self.t2 = t2
    }

    /// Timer F (and J): 64*T1, the non-INVITE transaction timeout.
    public var timerF: Duration { t1 * 64 }

    /// The standard values (T1 500 ms, T2 4 s).
    public static let `default` = SIPTimers()
}
