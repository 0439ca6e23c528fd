/// Timers E and F of a non-INVITE client transaction (RFC 3261 §17.1.2.2): over an unreliable transport the request
/// is sent again after T1, then at intervals doubling up to T2 (T2 from the first provisional response on); over a
/// reliable one never. At Timer F (64·T1) the transaction times out.
///
/// Both ends of nse run their transactions on it: ``SIPTransactionLayer`` for a client's connection, and the SIP
/// server's forwarder, which sends over flows it shares with everything else a device sends.
public enum SIPRetransmissions {
    /// How the timers ended.
    public enum End: Sendable, Equatable {
        /// Timer F fired before the transaction ended.
        case timedOut
        /// `retransmit` said the transaction is over, or the task was cancelled.
        case ended
    }

    /// Runs the timers from now. At each Timer E, `retransmit` sends the request again and says whether the
    /// transaction is proceeding (a provisional response came), or returns nil when there is nothing left to send
    /// (it ended, or its transport is gone).
    public static func run(
        timers: SIPTimers, reliable: Bool, retransmit: @Sendable () async -> Bool?
    ) async -> End {
        let clock = ContinuousClock()
        let deadline = clock.now + timers.timerF
        var interval = timers.t1
        while true {
            let wake = reliable ? deadline : min(clock.now + interval, deadline)
            do { try await clock.sleep(until: wake) } catch { return .ended }
            if clock.now >= deadline { return .timedOut }
            guard let proceeding = await retransmit() else { return .ended }
            interval = proceeding ? timers.t2 : min(interval * 2, timers.t2)
        }
    }
}
