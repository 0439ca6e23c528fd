public import NSEJSON

/// What `nse call` prints, and what a replay case's `call` expectation is matched against: how the caller's call
/// went, with its timeline in milliseconds from the INVITE (docs/voip.md, "The caller").
public struct CallerReport: Sendable {
    public var outcome: CallerDriver.Outcome
    /// When each step first happened, in milliseconds from the INVITE.
    public var timeline: [(step: CallerMachine.Step, milliseconds: Double)]
    /// Whether the INVITE carried a call offer sealed to the callee's device.
    public var sealed: Bool

    public init(
        outcome: CallerDriver.Outcome, timeline: [(step: CallerMachine.Step, milliseconds: Double)], sealed: Bool
    ) {
        self.outcome = outcome
        self.timeline = timeline
        self.sealed = sealed
    }

    public var json: JSON {
        var steps = JSONObject()
        for (step, milliseconds) in timeline { steps[step.rawValue] = .double((milliseconds * 1000).rounded() / 1000) }
        return [
            "call_id": .string(outcome.callID),
            "final_status": outcome.end.finalStatus.map { .int(Int64($0)) } ?? .null,
            "answered": .bool(outcome.end.answered),
            "ended_by": .string(outcome.end.endedBy.rawValue),
            "sealed": .bool(sealed),
            "timeline_ms": .object(steps),
            "failure": outcome.failure.map(JSON.string) ?? .null,
        ]
    }
}
