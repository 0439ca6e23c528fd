public import NSEJSON

/// What the nodes of a fleet share (`nse serve --database`, docs/serve.md "A fleet on PostgreSQL"): the request
/// log, the push fault rules and the unavailable switch, every node's results, which node serves which device
/// (a push for another node's device goes on to it: ``ForwardedPush``), and broadcast channels (``FleetChannels``). Declared here so that the server
/// knows no database; NSEFleet keeps it in PostgreSQL. Without a fleet every node keeps its own, as before.
public protocol FleetState: FleetChannels {
    /// This node's name, written beside its requests and results.
    var node: String { get }

    /// Writes one request, as received and answered, to the fleet's log.
    func record(_ entry: RequestLog.Entry) async throws(FleetError)
    /// The fleet's request log, newest first, filtered as ``RequestLog/entries(token:topic:uniqueID:since:limit:)``;
    /// each entry's JSON with its fleet-wide `id` and the `node` that took it.
    func requests(token: String?, topic: String?, uniqueID: String?, since: Int, limit: Int) async throws(FleetError)
        -> [JSON]
    func clearRequests() async throws(FleetError)

    /// Adds push rules after the others; their entries (`id`, `remaining`) as `GET /v1/control/faults` lists them.
    func addFaults(_ rules: [FaultRule]) async throws(FleetError) -> [JSON]
    /// False when no rule left has that id.
    func removeFault(id: Int) async throws(FleetError) -> Bool
    func clearFaults() async throws(FleetError)
    /// Every node answers 503 with `reason` (nil: back).
    func setUnavailable(_ reason: String?) async throws(FleetError)
    /// `{"unavailable": …, "rules": […]}`, the fleet's.
    func faults() async throws(FleetError) -> JSON
    /// One push's faults, in one round trip: the unavailable switch, else the first rule for `token`, used once
    /// fleet-wide.
    func takeFault(token: String) async throws(FleetError) -> FleetFaultDecision

    /// Copies a recorded result to the fleet (after the device's own store took it), for every node to read.
    /// Returns at once: the copy is written in the background, in order.
    func copyResult(_ result: JSON, row: Int64, device: String, apnsID: String)
    /// Hands every result another node records to `publish`, with the tokens of its device: the node's own
    /// `GET /v1/events` then streams the fleet's results. While `wanted` says no (nobody follows this node's
    /// stream) the results are not read at all.
    func follow(
        wanted: @escaping @Sendable () -> Bool,
        _ publish: @escaping @Sendable (_ result: JSON, _ tokens: [String]) -> Void)
    /// Says, in the background too, that the 200 of the push in `row` never reached its client (``Acknowledgements``).
    func markUnacknowledged(row: Int64, device: String)
    /// The fleet's copies of a device's results (`token`: either of its tokens), newest first, as
    /// ``ResultStore/results(for:limit:since:before:)`` reads them; nil when no node serves the token.
    func results(token: String, limit: Int, since: Int64, before: Int64) async throws(FleetError) -> [JSON]?

    /// The node serving `token` when it is another one, for a push to go on to it; nil when no other node serves it.
    func owner(of token: String) async -> FleetPeer?
    /// The other nodes that serve devices now (for a question every node answers for its own: `GET /v1/devices`).
    func peers() async -> [FleetPeer]
    /// Keeps that `peer` holds `token`, a token the fleet's rows do not have (a Live Activity's), for `device` (its
    /// remote token): ``located(_:)`` answers it until devices change hands.
    func remember(_ token: String, device: String, servedBy peer: FleetPeer)
    /// What was remembered for `token`.
    func located(_ token: String) -> (peer: FleetPeer, device: String)?
    /// Sends a push on to the node serving its device and returns its answer.
    func forward(_ push: ForwardedPush, to peer: FleetPeer) async -> ForwardOutcome
    /// The identity another node vouched for, when `headers` carry the fleet's secret; nil: the request is a client's.
    func forwardedIdentity(_ headers: APNsHeaders) -> ForwardedIdentity?
    /// How long a push waits for a node that cannot be reached to be taken over before it is answered 503.
    var takeoverWindow: Duration { get }
    /// Gives devices this node took over back to `node`, the node that served them, starting again: their `tokens`
    /// name it from now on (every node told, this one before this returns), and `folders` and `devices` (the
    /// folders as the nodes' rows name them) are its again, no longer this node's.
    func handBack(tokens: [String], folders: [String], devices: [String], to node: String) async throws(FleetError)
}

/// What the fleet says about one push.
public enum FleetFaultDecision: Sendable {
    /// No rule applies: the push goes on.
    case none
    /// The fleet plays unavailable: 503 with this reason.
    case unavailable(String)
    /// This rule (its fleet-wide id) answers the push; one of its uses is gone.
    case fault(id: Int, rule: FaultRule)
}

/// The fleet's database could not be used: one line, with no password in it.
public struct FleetError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
