import Logging
import NSEJSON

extension PushService {
    /// The other nodes' answers to `GET /v1/devices` for their own devices, by node name: with this node's own, the
    /// list any node of a fleet answers. All nodes are asked at once. One that cannot be reached may be stopping or
    /// being taken over: every node is asked again 200 ms later, the nodes read again (the taker then lists the
    /// devices it took), for the takeover window at most, then 503 `ServiceUnavailable` (as a push for its device
    /// gets). An answer that is not a list of devices, or none once asked: 500 `InternalServerError`.
    func otherNodesDevices() async -> Result<[(node: String, devices: [JSON])], APNsError> {
        guard let fleet else { return .success([]) }
        let started = ContinuousClock.now
        while true {
            let peers = await fleet.peers()
            let answers = await withTaskGroup(of: (FleetPeer, ForwardOutcome).self) { group in
                for peer in peers {
                    group.addTask {
                        let question = ForwardedPush(
                            token: "", headers: [], body: [],
                            identity: ForwardedIdentity(teamID: nil, certificateBundleID: nil), method: "GET",
                            path: "/v1/devices")
                        return (peer, await fleet.forward(question, to: peer))
                    }
                }
                var answers: [(FleetPeer, ForwardOutcome)] = []
                for await answer in group { answers.append(answer) }
                return answers
            }
            var lists: [(node: String, devices: [JSON])] = []
            var unreachable: (peer: FleetPeer, why: String)?
            for (peer, outcome) in answers {
                switch outcome {
                case .answered(let status, _, let body):
                    guard status == 200,
                        let devices = try? JSON.parse(body, options: .init(requireObject: false)).arrayValue
                    else {
                        logger.error(
                            "node's devices not listed: not a list",
                            metadata: ["fleet.node": .string(peer.node), "http.status": .stringConvertible(status)])
                        return .failure(.internalServerError)
                    }
                    lists.append((peer.node, devices))
                case .unreachable(let why):
                    unreachable = (peer, why)
                case .lost(let why):
                    logger.error(
                        "node's devices not listed: no answer",
                        metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
                    return .failure(.internalServerError)
                }
            }
            guard let unreachable else { return .success(lists.sorted { $0.node < $1.node }) }
            guard ContinuousClock.now - started < fleet.takeoverWindow else {
                logger.warning(
                    "node's devices not listed: node unreachable",
                    metadata: ["fleet.node": .string(unreachable.peer.node), "fleet.error": .string(unreachable.why)])
                return .failure(APNsError(503, "ServiceUnavailable"))
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}
