public import Logging
public import NSESIP
import NSESystem
import Synchronization

/// Runs a ``CallerMachine`` for real: a SIP user agent places the call, one timer task per running timer, and one
/// merged stream of events the machine takes in order. No polling: the loop waits for the next event.
public struct CallerDriver: Sendable {
    /// How the call went.
    public struct Outcome: Sendable, Equatable {
        /// The INVITE's Call-ID.
        public var callID: String
        public var end: CallerMachine.End
        /// What failed, when the network did (`ended_by: failure`): never the call's content.
        public var failure: String?
    }

    public let call: SIPOutgoingCall
    public let plan: CallerMachine.Plan
    public let configuration: SIPUserAgentConfiguration
    public let logger: Logger

    public init(
        call: SIPOutgoingCall, plan: CallerMachine.Plan, configuration: SIPUserAgentConfiguration, logger: Logger
    ) {
        self.call = call
        self.plan = plan
        self.configuration = configuration
        self.logger = logger
    }

    /// Places the call and runs it to its end; `step` is told each step of the timeline as it happens.
    public func run(step: @Sendable (CallerMachine.Step) -> Void) async -> Outcome {
        let agent = SIPUserAgent(configuration: configuration, logger: logger)
        let handle: SIPCall
        do {
            handle = try await agent.call(call)
        } catch {
            await agent.close()
            let failed = CallerMachine.End(endedBy: .failure, finalStatus: nil, answered: false)
            return Outcome(callID: call.callID ?? "", end: failed, failure: "\(error)")
        }
        let (inputs, input) = AsyncStream<CallerMachine.Event>.makeStream()
        var machine = CallerMachine(plan: plan)
        var outcome = Outcome(
            callID: handle.callID, end: CallerMachine.End(endedBy: .failure, finalStatus: nil, answered: false))
        var timers: [CallerMachine.Timer: Task<Void, Never>] = [:]
        let forwarder = Task {
            for await happened in handle.events { input.yield(.call(happened)) }
            // A stream that ends without a last event (the agent closed under it) is a failure, which the machine
            // ignores once the call is over.
            input.yield(.call(.failed(SIPError(.transport, "the call ended without a final answer"))))
        }

        func perform(_ actions: [CallerMachine.Action]) async -> Bool {
            for action in actions {
                switch action {
                case .cancel:
                    await handle.cancel()
                case .hangUp:
                    await handle.hangUp()
                case .start(let timer, let seconds):
                    timers[timer]?.cancel()
                    timers[timer] = Task {
                        do { try await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000))) } catch { return }
                        input.yield(.timer(timer))
                    }
                case .stop(let timer):
                    timers.removeValue(forKey: timer)?.cancel()
                case .record(let recorded):
                    step(recorded)
                case .finish(let end):
                    outcome.end = end
                    return false
                }
            }
            return true
        }

        if await perform(machine.start()) {
            for await event in inputs {
                if case .call(.failed(let error)) = event, outcome.failure == nil { outcome.failure = "\(error)" }
                if !(await perform(machine.handle(event))) { break }
            }
        }
        if outcome.end.endedBy != .failure { outcome.failure = nil }
        for (_, timer) in timers { timer.cancel() }
        forwarder.cancel()
        input.finish()
        await agent.close()
        return outcome
    }

    /// Places the call, runs it to its end, and reports it with the time of each step from the INVITE.
    public func report(sealed: Bool) async -> CallerReport {
        let start = SystemClock.monotonicNanoseconds()
        let timeline = Mutex<[(step: CallerMachine.Step, milliseconds: Double)]>([])
        let outcome = await run { step in
            let now = SystemClock.millisecondsSince(start)
            timeline.withLock { steps in
                if !steps.contains(where: { $0.step == step }) { steps.append((step, now)) }
            }
        }
        return CallerReport(outcome: outcome, timeline: timeline.withLock { $0 }, sealed: sealed)
    }
}
