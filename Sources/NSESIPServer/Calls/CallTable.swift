import NSESIP

/// The calls going through the server, by Call-ID, with the two other ways in: the Via branch of a device leg's
/// INVITE (its answers carry it) and of a request relayed inside a dialog (a BYE, a re-INVITE), whose answer goes
/// back the way the request came.
///
/// A value owned by `SIPServer`'s actor, like `Forwarder`: it keeps state; the server decides and sends.
struct CallTable {
    /// An in-dialog request the server relayed and awaits the answer to.
    struct Relay {
        var callID: String
        var method: String
        /// Where the request came from, and its answer goes.
        var returnFlow: ServerFlow
        /// The request's server transaction key (its final answer is stored there for retransmissions).
        var transactionKey: String
        /// Calls off the relayed copy's retransmissions.
        var retransmission: StopSignal
    }

    /// How long an ended call is kept to absorb retransmissions (Timer H / J, 64·T1).
    let linger: Duration
    /// Where the calls in each phase are shown, as they move.
    private let metrics: SIPServerMetrics
    /// How long an answered call is kept without a BYE (a phone call of half a day).
    static let longestDialog = Duration.seconds(12 * 3600)

    private var calls: [String: HeldCall] = [:]
    private var legs: [String: String] = [:]
    private var relays: [String: Relay] = [:]
    /// When each call came in, for `longestDialog`.
    private var arrivals: [String: ContinuousClock.Instant] = [:]

    init(linger: Duration, metrics: SIPServerMetrics = SIPServerMetrics()) {
        self.linger = linger
        self.metrics = metrics
    }

    subscript(callID: String) -> HeldCall? {
        get { calls[callID] }
        set {
            metrics.callMoved(from: calls[callID]?.phase, to: newValue?.phase)
            calls[callID] = newValue
            if newValue == nil { forget(callID) } else if arrivals[callID] == nil { arrivals[callID] = .now }
            for leg in newValue?.legs ?? [] { legs[leg.branch] = callID }
        }
    }

    /// The number of calls kept (ended ones included).
    var count: Int { calls.count }

    /// The call one of whose device legs' INVITE has this branch.
    func callID(forLeg branch: String) -> String? { legs[branch] }

    /// The step of every call kept, by Call-ID.
    var steps: [String: CallStep] { calls.mapValues(\.step) }

    /// The Call-IDs of the calls of an AOR still waiting for a device (held, or forking to others), oldest first.
    func waiting(aor: String) -> [String] {
        calls.values.filter { $0.aor == aor && $0.isPending }
            .sorted { (arrivals[$0.callID] ?? .now) < (arrivals[$1.callID] ?? .now) }
            .map(\.callID)
    }

    mutating func addRelay(branch: String, _ relay: Relay) { relays[branch] = relay }

    func relay(branch: String) -> Relay? { relays[branch] }

    mutating func removeRelay(branch: String) -> Relay? { relays.removeValue(forKey: branch) }

    /// Drops the calls over for longer than `linger`, and the answered ones older than `longestDialog`.
    mutating func sweep(now: ContinuousClock.Instant = .now) {
        for (callID, call) in calls {
            switch call.phase {
            case .ended(let since) where now - since > linger:
                self[callID] = nil
            case .answered where now - (arrivals[callID] ?? now) > Self.longestDialog:
                self[callID] = nil
            default:
                break
            }
        }
    }

    private mutating func forget(_ callID: String) {
        arrivals[callID] = nil
        legs = legs.filter { $0.value != callID }
        for (branch, relay) in relays where relay.callID == callID {
            relay.retransmission.stop()
            relays[branch] = nil
        }
    }
}
