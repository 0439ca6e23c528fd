import NSECrypto
import NSESIP

/// The misbehaviours of `SIPServerConfiguration.Faults` (for testing clients), in one place.
///
/// The server asks it three questions and otherwise does not know faults exist: what to do with a request on arrival,
/// how to answer it once it is valid, and how to deliver held messages. With no knob set every answer is "as usual".
struct SIPFaultPlan: Sendable {
    /// What to do with a request as it arrives (after retransmission absorption).
    enum Arrival: Sendable {
        case handle
        /// Never answer it.
        case ignore
        /// Handle it after this long.
        case delay(Duration)
    }

    /// How to answer a valid request instead of handling it.
    enum Answer: Sendable {
        /// Close the connection without answering.
        case closeConnection
        /// 503 with Retry-After.
        case serviceUnavailable
        /// A fresh 401 challenge, whatever the credentials.
        case challenge
    }

    /// How to deliver an AOR's held messages on REGISTER.
    struct Delivery: Sendable {
        /// Sent first, with a fresh Call-ID, not a held message (no delivery is recorded for it).
        var unrelated: HeldMessage?
        /// Copies sent of each held message (2: a retransmission, same branch).
        var copies: Int
    }

    let faults: SIPServerConfiguration.Faults
    private var datagramsSeen = 0

    init(_ faults: SIPServerConfiguration.Faults) {
        self.faults = faults
    }

    /// Counts a received datagram; true when it is to be ignored (the first `dropFirstPackets`).
    mutating func dropsDatagram() -> Bool {
        guard faults.dropFirstPackets > 0 else { return false }
        datagramsSeen += 1
        return datagramsSeen <= faults.dropFirstPackets
    }

    /// The number of datagrams seen so far (for the log line of a dropped one).
    var datagramCount: Int { datagramsSeen }

    func arrival(of request: SIPRequest) -> Arrival {
        if faults.neverAnswer { return .ignore }
        if faults.delayMilliseconds > 0 { return .delay(.milliseconds(faults.delayMilliseconds)) }
        return .handle
    }

    /// The fault answer for a well-formed request, or nil to handle it.
    func answer(for method: String, over kind: SIPTransportKind) -> Answer? {
        if method == "REGISTER", faults.resetConnectionAfterRegister, kind != .udp { return .closeConnection }
        if faults.answer503 { return .serviceUnavailable }
        if faults.alwaysChallenge { return .challenge }
        return nil
    }

    /// How to deliver held messages to `aor` at a contact on `host`; `order` gives the next arrival order.
    func delivery(aor: String, host: String, now: Int64, order: () -> Int64) -> Delivery {
        var plan = Delivery(unrelated: nil, copies: faults.deliverDuplicates ? 2 : 1)
        if faults.unrelatedCallIDFirst, let tag = try? SecureRandom.hex(8), let callID = try? SecureRandom.hex(16),
            let id = try? SecureRandom.hex(16)
        {
            let from = SIPNameAddress(
                uri: SIPURI(user: "nse-server", host: host), parameters: [SIPParameter("tag", tag)])
            let headers = [
                ("From", from.description), ("To", "<\(aor)>"), ("Call-ID", callID), ("Content-Type", "text/plain"),
            ]
            plan.unrelated = HeldMessage(
                id: id, aor: aor, callID: callID, headers: headers, body: Array("unrelated".utf8),
                receivedAt: now, expiresAt: now + 60, order: order())
        }
        return plan
    }
}
