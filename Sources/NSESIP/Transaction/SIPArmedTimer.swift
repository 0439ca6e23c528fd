public import NIOCore

/// A timer a transaction (or a fetch) arms and usually cancels: either a task that sleeps, or one callback
/// scheduled on a connection's event loop.
///
/// Over a reliable transport a non-INVITE client transaction has a single timer, Timer F (64·T1), and it is almost
/// always cancelled by the final response a few milliseconds later. A sleeping task for it costs a task, a timer
/// registered with the global executor's timer thread, and the hops to arm and cancel it; a callback on the event
/// loop that already serves the connection costs an entry in that loop's timer heap, removed on cancel.
public enum SIPArmedTimer: Sendable {
    case task(Task<Void, Never>)
    case scheduled(Scheduled<Void>)

    /// Runs `fire` on `eventLoop` once `delay` has passed, unless cancelled first.
    public static func after(
        _ delay: Duration, on eventLoop: any EventLoop, fire: @escaping @Sendable () -> Void
    ) -> SIPArmedTimer {
        .scheduled(eventLoop.scheduleTask(in: TimeAmount(delay), fire))
    }

    public func cancel() {
        switch self {
        case .task(let task): task.cancel()
        case .scheduled(let scheduled): scheduled.cancel()
        }
    }
}
