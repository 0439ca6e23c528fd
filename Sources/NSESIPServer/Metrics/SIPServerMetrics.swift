public import CoreMetrics

/// What `nse sip-server` counts (docs/sip.md, "Metrics"), through swift-metrics' API with the factory the
/// executable gives. The gauges are set by the parts that hold the state (`Registrar`, `HeldStore`, `CallTable`),
/// the counters from the server's events; no label carries an AOR, a Call-ID or a token.
public struct SIPServerMetrics: Sendable {
    /// The metrics' names, as Prometheus shows them.
    public enum Name {
        public static let registrations = "nse_sip_registrations"
        public static let heldMessages = "nse_sip_held_messages"
        public static let calls = "nse_sip_calls"
        public static let responses = "nse_sip_responses_total"
        public static let messagesHeld = "nse_sip_messages_held_total"
        public static let messagesDelivered = "nse_sip_messages_delivered_total"
        public static let heldDeliveries = "nse_sip_held_deliveries"
        public static let deviceDeliveries = "nse_sip_device_deliveries_total"
        public static let messagesExpired = "nse_sip_messages_expired_total"
        public static let callsEnded = "nse_sip_calls_ended_total"
        public static let pushes = "nse_sip_pushes_total"
    }

    /// The methods a `method` label names; any other is `other` (a client may send any token as a method).
    static let methods: Set<String> = [
        "REGISTER", "MESSAGE", "OPTIONS", "INVITE", "ACK", "CANCEL", "BYE", "INFO", "UPDATE", "PRACK", "SUBSCRIBE",
        "NOTIFY", "REFER", "PUBLISH",
    ]

    private let factory: any MetricsFactory
    /// The registrar's bindings (expired ones leave at the next sweep).
    let registrations: Meter
    /// Held MESSAGEs not delivered yet (expired ones leave at the next sweep).
    let heldMessages: Meter
    /// The copies of held MESSAGEs still owed to devices (one per device a message waits for).
    let heldDeliveries: Meter
    /// The calls the caller still waits on or talks in, by the phase of `HeldCall` (`held`, `forking`, `answered`).
    private let callPhases: [String: Meter]
    private let messagesHeld: Counter
    private let messagesDelivered: Counter
    private let deviceDeliveries: Counter
    private let messagesExpired: Counter

    /// - Parameter factory: makes the metrics; one per server, so that servers in one process count apart.
    public init(factory: any MetricsFactory) {
        self.factory = factory
        registrations = Meter(label: Name.registrations, dimensions: [], factory: factory)
        heldMessages = Meter(label: Name.heldMessages, dimensions: [], factory: factory)
        heldDeliveries = Meter(label: Name.heldDeliveries, dimensions: [], factory: factory)
        // Made at once, so a scrape shows 0 before the first call rather than nothing.
        callPhases = Dictionary(
            uniqueKeysWithValues: ["held", "forking", "answered"].map {
                ($0, Meter(label: Name.calls, dimensions: [("phase", $0)], factory: factory))
            })
        messagesHeld = Counter(label: Name.messagesHeld, dimensions: [], factory: factory)
        messagesDelivered = Counter(label: Name.messagesDelivered, dimensions: [], factory: factory)
        deviceDeliveries = Counter(label: Name.deviceDeliveries, dimensions: [], factory: factory)
        messagesExpired = Counter(label: Name.messagesExpired, dimensions: [], factory: factory)
    }

    /// Counts nothing (a server embedded without metrics).
    public init() {
        self.init(factory: NOOPMetricsHandler.instance)
    }

    /// Counts what an event tells: a final answer the server sent, a message held, delivered or expired, a push's
    /// answer, a call's end.
    func count(_ event: SIPServerEvent) {
        switch event {
        case .answered(let method, _, let status):
            Counter(
                label: Name.responses,
                dimensions: [("method", Self.methods.contains(method) ? method : "other"), ("status", String(status))],
                factory: factory
            ).increment()
        case .held: messagesHeld.increment()
        case .delivered(_, _, _, _, let remaining):
            deviceDeliveries.increment()
            if remaining == 0 { messagesDelivered.increment() }
        case .expired: messagesExpired.increment()
        case .pushed(_, _, _, let status, _):
            Counter(label: Name.pushes, dimensions: [("status", status.map(String.init) ?? "none")], factory: factory)
                .increment()
        case .call(_, _, let step, _):
            switch step {
            case .declined, .cancelled, .timedOut, .hungUp:
                Counter(label: Name.callsEnded, dimensions: [("reason", step.rawValue)], factory: factory).increment()
            case .held, .forwarded, .ringing, .answered:
                break
            }
        case .registered, .unregistered, .badPushParameters, .forwarded, .room:
            break
        }
    }

    /// A call moved from one phase to another (nil: not in the table).
    func callMoved(from old: HeldCall.Phase?, to new: HeldCall.Phase?) {
        let (before, after) = (old.flatMap(Self.label), new.flatMap(Self.label))
        guard before != after else { return }
        if let before { callPhases[before]?.decrement() }
        if let after { callPhases[after]?.increment() }
    }

    /// The `phase` label of a call the caller still waits on or talks in; nil once it is over for the caller.
    private static func label(_ phase: HeldCall.Phase) -> String? {
        switch phase {
        case .held: "held"
        case .forking: "forking"
        case .answered: "answered"
        case .cancelling, .ended: nil
        }
    }
}
