import Hummingbird
import Logging

extension PushService {
    /// A control request about a device another node of the fleet serves (its online switch, `/v1/notify`) goes to
    /// that node, and its answer is the answer: any node answers for any device. Nil: the device is not another
    /// node's (it is this one's, or nobody's), or the request came from a node already (never sent on twice).
    func relay(token: String, method: String, path: String, headers: APNsHeaders, body: [UInt8]) async -> Response? {
        guard let fleet, !headers.contains(where: { $0.name == FleetHeaders.node }), devices.device(for: token) == nil,
            let peer = await fleet.owner(of: token)
        else { return nil }
        let request = ForwardedPush(
            token: token, headers: FleetHeaders.stripped(headers), body: body,
            identity: ForwardedIdentity(teamID: nil, certificateBundleID: nil), method: method, path: path)
        switch await fleet.forward(request, to: peer) {
        case .answered(let status, let headers, let body):
            return PushResponder.relayed(status: status, headers: headers, body: body)
        case .unreachable(let why):
            logger.warning(
                "control request not forwarded: node unreachable",
                metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
            return PushResponder.error(APNsError(503, "ServiceUnavailable"), apnsID: nil)
        case .lost(let why):
            logger.error(
                "forwarded control request not answered",
                metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
            return PushResponder.error(.internalServerError, apnsID: nil)
        }
    }
}
