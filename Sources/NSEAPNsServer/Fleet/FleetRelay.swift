import Hummingbird
import Logging

extension PushService {
    /// Sends `request` on to the other node of the fleet that serves its token, and what came of it; nil when none
    /// does: the device is this node's (maybe taken over while waiting), or nobody's. A node that cannot be reached
    /// may be stopping or stopped: the request waits for it, or for the node taking its devices over (trying again
    /// every 200 ms, the fleet's takeover window at most), and `.unreachable` is what is left after that. A request
    /// that went out and got no answer is never sent again (`.lost`).
    func sendOn(_ request: ForwardedPush) async -> (outcome: ForwardOutcome, peer: FleetPeer)? {
        guard let fleet, devices.device(for: request.token) == nil else { return nil }
        var owner = await fleet.owner(of: request.token)
        // A token without a row (a Live Activity's) is looked for on every node.
        if owner == nil { owner = await locate(request.token)?.peer }
        guard var peer = owner else { return nil }
        let started = ContinuousClock.now
        while true {
            var outcome = await fleet.forward(request, to: peer)
            // Not that node's any more (given back meanwhile): the push was not taken, and is sent where it is now.
            if case .answered(FleetHeaders.misdirected.status, _, _) = outcome {
                outcome = .unreachable("\(peer.node) no longer serves the device")
            }
            guard case .unreachable = outcome, ContinuousClock.now - started < fleet.takeoverWindow else {
                return (outcome, peer)
            }
            try? await Task.sleep(for: .milliseconds(200))
            guard devices.device(for: request.token) == nil else { return nil }
            // Moved (taken over), or still the node that cannot be reached: a Live Activity's token is not in the
            // rows the takeover moves, so it is looked for again, else waited for where it was.
            if let moved = await fleet.owner(of: request.token) {
                peer = moved
            } else if let located = await locate(request.token) {
                peer = located.peer
            }
        }
    }

    /// A control request about a device another node of the fleet serves (its online switch, `/v1/notify`) goes to
    /// that node, and its answer is the answer: any node answers for any device. Nil: the device is not another
    /// node's (it is this one's, or nobody's), or the request came from a node already (never sent on twice).
    func relay(token: String, method: String, path: String, headers: APNsHeaders, body: [UInt8]) async -> Response? {
        guard fleet != nil, !headers.contains(where: { $0.name == FleetHeaders.node }),
            let (outcome, peer) = await sendOn(
                ForwardedPush(
                    token: token, headers: FleetHeaders.stripped(headers), body: body,
                    identity: ForwardedIdentity(teamID: nil, certificateBundleID: nil), method: method, path: path))
        else { return nil }
        switch outcome {
        case .answered(let status, let headers, let body):
            return PushResponder.relayed(status: status, headers: headers, body: body)
        case .unreachable(let why):
            logger.warning(
                "control request not forwarded: node unreachable",
                metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
            return PushResponder.error(.serviceUnavailable, apnsID: nil)
        case .lost(let why):
            logger.error(
                "forwarded control request not answered",
                metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
            return PushResponder.error(.internalServerError, apnsID: nil)
        }
    }
}
