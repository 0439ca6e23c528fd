import Logging
import NSEJSON

extension PushService {
    /// The other nodes' answers to `GET /v1/devices` for their own devices (those with `token` alone, when given),
    /// by node name: with this node's own, the list any node of a fleet answers. All nodes are asked at once. One
    /// that cannot be reached may be stopping or being taken over: every node is asked again 200 ms later, the
    /// nodes read again (the taker then lists the devices it took), for the takeover window at most, then 503
    /// `ServiceUnavailable` (as a push for its device gets). An answer that is not a list of devices, or none once
    /// asked: 500 `InternalServerError`.
    func otherNodesDevices(token: String? = nil) async -> Result<[(node: String, devices: [JSON])], APNsError> {
        guard let fleet else { return .success([]) }
        let started = ContinuousClock.now
        while true {
            var lists: [(node: String, devices: [JSON])] = []
            var unreachable: (peer: FleetPeer, why: String)?
            for (peer, outcome) in await askEveryNode(for: token) {
                switch outcome {
                case .listed(let devices): lists.append((peer.node, devices))
                case .unreachable(let why): unreachable = (peer, why)
                case .failed(let why):
                    logger.error(
                        "node's devices not listed",
                        metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
                    return .failure(.internalServerError)
                }
            }
            guard let unreachable else { return .success(lists.sorted { $0.node < $1.node }) }
            guard ContinuousClock.now - started < fleet.takeoverWindow else {
                logger.warning(
                    "node's devices not listed: node unreachable",
                    metadata: ["fleet.node": .string(unreachable.peer.node), "fleet.error": .string(unreachable.why)])
                return .failure(.serviceUnavailable)
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The other node serving `token` when the fleet's device rows name none, and the remote token of the device
    /// that holds it. A Live Activity's token (an activity's, a push-to-start token) is made on its device's node,
    /// by the app (`nse device activity start`) or a start push, and only that node knows it: every node is asked
    /// once (`GET /v1/devices?token=`, nodes that cannot be reached left out), and the one that lists a device is
    /// remembered until devices change hands. Nil: no node lists one.
    func locate(_ token: String) async -> (peer: FleetPeer, device: String)? {
        // Only what could be a token is asked about (it goes in the question's path).
        guard let fleet, APNsValidation.isTokenShaped(token) else { return nil }
        if let known = fleet.located(token) { return known }
        for (peer, outcome) in await askEveryNode(for: token.lowercased()) {
            guard case .listed(let devices) = outcome,
                let device = devices.first?["remote_token"]?.stringValue?.lowercased()
            else { continue }
            fleet.remember(token, device: device, servedBy: peer)
            return (peer, device)
        }
        return nil
    }

    /// What to read or follow a device another node serves by: `token` when the fleet's rows name it (either of an
    /// app's tokens names its device), else the remote token of the device holding it (``locate(_:)``: a Live
    /// Activity's token), else `token` (no node holds it).
    func fleetDeviceToken(for token: String) async -> String {
        if let fleet, await fleet.owner(of: token) == nil, let located = await locate(token) {
            return located.device
        }
        return token.lowercased()
    }

    /// What one node said when asked for its own devices.
    private enum NodeDevices {
        case listed([JSON])
        /// It could not be reached: the question never left.
        case unreachable(String)
        /// It answered something else than a list, or did not answer.
        case failed(String)
    }

    /// Asks every other node for its own devices (with `token` alone, when given), at once.
    private func askEveryNode(for token: String?) async -> [(FleetPeer, NodeDevices)] {
        guard let fleet else { return [] }
        let peers = await fleet.peers()
        let path = "/v1/devices" + (token.map { "?token=\($0)" } ?? "")
        return await withTaskGroup(of: (FleetPeer, NodeDevices).self) { group in
            for peer in peers {
                group.addTask {
                    let question = ForwardedPush(
                        token: token ?? "", headers: [], body: [],
                        identity: ForwardedIdentity(teamID: nil, certificateBundleID: nil), method: "GET", path: path)
                    switch await fleet.forward(question, to: peer) {
                    case .answered(let status, _, let body):
                        guard status == 200,
                            let devices = try? JSON.parse(body, options: .init(requireObject: false)).arrayValue
                        else { return (peer, .failed("answered \(status), not a list of devices")) }
                        return (peer, .listed(devices))
                    case .unreachable(let why): return (peer, .unreachable(why))
                    case .lost(let why): return (peer, .failed(why))
                    }
                }
            }
            var answers: [(FleetPeer, NodeDevices)] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
    }
}
