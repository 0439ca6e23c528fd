import Logging
import NIOCore
import NSESIP

/// Store-and-forward delivery: sends a MESSAGE (one the `HeldStore` holds, or a sender's copy forwarded live) to a
/// registered binding as a non-INVITE client transaction (RFC 3261 §17.1.2), and records the outcome: a held
/// message counts as delivered only once a device answers it 2xx.
///
/// A value owned by `SIPServer`'s actor, like `Registrar`; it owns the `HeldStore`, since what is held is what it
/// delivers. Over UDP each transaction's retransmissions run as a `Transmission`, a child task of the server's task
/// tree that the forwarder calls off when the device answers; over TCP/TLS there is nothing to retransmit, and its
/// one timer, Timer F, is a callback armed on the connection's event loop (``SIPArmedTimer``), cancelled by the
/// answer a few milliseconds later.
///
/// Not `SIPTransactionLayer`: that layer owns one client connection (`SIPTransport`) and reads it itself, while the
/// server sends over flows it shares with everything else arriving from a device (a UDP listener, an accepted
/// TCP/TLS connection), whose responses reach it through its own inbound stream. Both run the same timers
/// (`SIPRetransmissions`).
struct Forwarder {
    /// Where the answer to a copy counts.
    struct Carrying {
        /// The held message it delivers (nil: a live forward not held, or a fault's unrelated message).
        var heldID: String?
        /// The sender whose MESSAGE it forwards (nil: a held message delivered on REGISTER).
        var senderKey: String?
        /// The device (registrar binding key) it goes to: its 2xx delivers the held message to that device alone.
        var device: String?
    }

    /// How a transaction ended.
    struct Outcome {
        /// The device's final status; 408 at Timer F, 503 when the flow closed first.
        var status: Int
        var carrying: Carrying
        /// The held message this answer delivered to its device (a 2xx to a copy that device still waited for), as
        /// it now stands.
        var delivered: HeldMessage?

        var succeeded: Bool { (200..<300).contains(status) }
    }

    /// One copy on its way: the events to report, and how its timers run.
    struct Sent {
        var events: [SIPServerEvent]
        var timing: Timing
    }

    /// How a sent copy's timers run.
    enum Timing {
        /// Over UDP: retransmissions until Timer F, a child task the server runs.
        case retransmitting(Transmission)
        /// Over TCP/TLS: Timer F, to arm on the connection's event loop (``Forwarder/armTimerF(branch:fire:)``).
        case timerF(branch: String)
    }

    /// The retransmissions of one transaction over UDP (``SIPRetransmissions``: every T1, doubling up to T2) until
    /// Timer F.
    struct Transmission: Sendable {
        let branch: String
        let bytes: [UInt8]
        let flow: ServerFlow
        let timers: SIPTimers
        let stop: StopSignal

        /// 408 at Timer F, 503 when the flow closed before an answer; nil when the forwarder called it off (the
        /// device answered) or the server stopped.
        func run() async -> Int? {
            let (bytes, flow, timers) = (self.bytes, self.flow, self.timers)
            return await stop.run {
                let end = await SIPRetransmissions.run(timers: timers, reliable: false) {
                    guard flow.isLive else { return nil }
                    flow.send(bytes)
                    return false
                }
                switch end {
                case .timedOut: return 408
                case .ended: return flow.isLive ? nil : 503
                }
            }
        }
    }

    /// What ends a transaction's timers when it is answered.
    private enum Timer {
        case retransmissions(StopSignal)
        case timerF(SIPArmedTimer?)

        func cancel() {
            switch self {
            case .retransmissions(let stop): stop.stop()
            case .timerF(let armed): armed?.cancel()
            }
        }
    }

    private struct Transaction {
        var flow: ServerFlow
        var carrying: Carrying
        var aor: String
        var callID: String
        var timer: Timer
    }

    /// The messages held for fork-late delivery.
    private(set) var held: HeldStore
    private let timers: SIPTimers
    private let logger: Logger
    /// Open client transactions by Via branch.
    private var transactions: [String: Transaction] = [:]

    init(held: HeldStore, timers: SIPTimers, logger: Logger) {
        self.held = held
        self.timers = timers
        self.logger = logger
    }

    /// Keeps a message for later delivery (thrown: it is not stored, and so not held).
    mutating func hold(_ record: HeldMessage) throws(SIPServerError) {
        try held.hold(record)
    }

    /// The next arrival order of a held message.
    mutating func nextOrder() -> Int64 { held.nextOrder() }

    /// Drops held messages whose lifetime is over; returns those that expired undelivered.
    mutating func sweep(now: Int64) -> [HeldMessage] { held.sweep(now: now) }

    /// Hands what binding `old` is still owed to the binding `heir` that replaced it (``HeldStore/reassign(aor:from:to:)``);
    /// returns the number of messages.
    mutating func reassign(aor: String, from old: String, to heir: String) -> Int {
        held.reassign(aor: aor, from: old, to: heir)
    }

    /// Sends the held messages of `aor` that `device` (the binding that registered) is still to get over the
    /// REGISTER's flow (but those already on their way to it), as the fault plan says. A message that arrived before
    /// the device registered is not among them: it was held for the devices registered then.
    mutating func deliverHeld(
        aor: String, device: String, flow: ServerFlow, contactURI: SIPURI, faults: SIPFaultPlan, now: Int64
    ) -> [Sent] {
        let waiting = held.waiting(aor: aor, device: device, now: now)
        guard !waiting.isEmpty else { return [] }
        let plan = faults.delivery(aor: aor, host: contactURI.host, now: now) { held.nextOrder() }
        var sent: [Sent] = []
        if let unrelated = plan.unrelated {
            sent.append(send(unrelated, over: flow, to: contactURI, carrying: Carrying(), copies: 1))
        }
        for message in waiting {
            // A copy on its way to the same device over another flow is not waited for: the device registered
            // again from elsewhere, most likely because that flow is dead.
            let inFlight = transactions.values.contains { $0.carrying.heldID == message.id && $0.flow.key == flow.key }
            if inFlight { continue }
            sent.append(
                send(
                    message, over: flow, to: contactURI, carrying: Carrying(heldID: message.id, device: device),
                    copies: plan.copies))
        }
        return sent
    }

    /// Sends one MESSAGE as a client transaction; `copies` above 1 sends the same bytes again at once, as a
    /// retransmission would. A held message's attempt number is its CSeq.
    mutating func send(
        _ record: HeldMessage, over flow: ServerFlow, to contactURI: SIPURI, carrying: Carrying,
        copies: Int
    ) -> Sent {
        let attempt = carrying.heldID.flatMap { held.recordAttempt(id: $0) } ?? 1
        let branch = SIPIdentifiers.branch()
        var request = SIPRequest(method: "MESSAGE", uri: contactURI, body: record.body)
        request.headers.add(
            "Via",
            SIPVia(
                transport: flow.kind.viaToken, host: flow.localHost, port: flow.localPort,
                parameters: [SIPParameter("branch", branch)]
            ).description)
        request.headers.add("Max-Forwards", "70")
        for (name, value) in record.headers { request.headers.add(name, value) }
        request.headers.add("CSeq", SIPCSeq(sequence: UInt32(attempt), method: "MESSAGE").description)
        let bytes = request.serialized()
        // Over UDP a stop signal ends the retransmission task; over TCP/TLS Timer F is armed by the server.
        let timer: Timer
        let timing: Timing
        if flow.kind == .udp {
            let stop = StopSignal()
            timer = .retransmissions(stop)
            timing = .retransmitting(
                Transmission(branch: branch, bytes: bytes, flow: flow, timers: timers, stop: stop))
        } else {
            timer = .timerF(nil)
            timing = .timerF(branch: branch)
        }
        transactions[branch] = Transaction(
            flow: flow, carrying: carrying, aor: record.aor, callID: record.callID, timer: timer)
        var events: [SIPServerEvent] = []
        for _ in 0..<max(1, copies) {
            flow.send(bytes)
            events.append(.forwarded(aor: record.aor, callID: record.callID, transport: flow.kind, attempt: attempt))
        }
        logger.debug(
            "sip server message sent to device",
            metadata: [
                "sip.call_id": "\(record.callID)", "sip.method": "MESSAGE", "sip.aor": "\(record.aor)",
                "sip.transport": "\(flow.kind.rawValue)", "sip.duplicate": "\(copies > 1)",
            ])
        return Sent(events: events, timing: timing)
    }

    /// Arms Timer F of a transaction over TCP/TLS on its connection's event loop; `fire` runs there when no answer
    /// came in time (the server then ends it with 408).
    mutating func armTimerF(branch: String, fire: @escaping @Sendable () -> Void) {
        guard let transaction = transactions[branch], case .timerF = transaction.timer else { return }
        let armed = SIPArmedTimer.after(timers.timerF, on: transaction.flow.channel.eventLoop, fire: fire)
        transactions[branch]?.timer = .timerF(armed)
    }

    /// The copies of `senderKey`'s MESSAGE still on their way now deliver the held message `heldID` (the sender's
    /// message was held at its accept timeout).
    mutating func adopt(senderKey: String, heldID: String) {
        for (branch, transaction) in transactions where transaction.carrying.senderKey == senderKey {
            transactions[branch]?.carrying.heldID = heldID
        }
    }

    /// A response from a device (`branch`: its top Via's): the outcome of the transaction it ends, or nil (provisional, or
    /// matching none).
    mutating func answer(_ response: SIPResponse, branch: String?) -> Outcome? {
        guard let branch, transactions[branch] != nil else {
            // The Call-ID only when it is clean: a response is not refused like a request, but never quoted raw.
            let callID = response.headers.firstInvalidField == nil ? response.headers.callID ?? "" : "(invalid)"
            logger.debug(
                "sip server dropping response matching no transaction",
                metadata: [
                    "sip.call_id": "\(callID)", "sip.status": "\(response.statusCode)",
                ])
            return nil
        }
        if response.isProvisional { return nil }
        return finish(branch: branch, status: response.statusCode)
    }

    /// Ends a transaction with `status` (the device's, or its transmission's 408/503) and records a delivery; nil
    /// when it already ended.
    mutating func finish(branch: String, status: Int) -> Outcome? {
        guard let transaction = transactions.removeValue(forKey: branch) else { return nil }
        transaction.timer.cancel()
        logger.debug(
            "sip server device answered",
            metadata: [
                "sip.call_id": "\(transaction.callID)", "sip.method": "MESSAGE", "sip.aor": "\(transaction.aor)",
                "sip.status": "\(status)",
            ])
        var outcome = Outcome(status: status, carrying: transaction.carrying)
        if outcome.succeeded, let heldID = transaction.carrying.heldID {
            outcome.delivered = held.markDelivered(id: heldID, device: transaction.carrying.device)
        }
        return outcome
    }

    /// Calls off every transaction (the server is stopping).
    mutating func stopAll() {
        for (_, transaction) in transactions { transaction.timer.cancel() }
        transactions = [:]
    }
}
