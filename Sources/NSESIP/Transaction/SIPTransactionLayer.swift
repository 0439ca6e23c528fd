public import Logging

/// Client and server transactions (RFC 3261 §17) over one transport: non-INVITE ones (§17.1.2, §17.2.2), and
/// INVITE ones (§17.1.1, §17.2.1) with the parts of the UA core that belong with them: the ACK of a 2xx sent again
/// for each retransmitted 2xx (§13.2.2.4), and a final answer to an INVITE sent again over UDP until its ACK
/// comes (Timer G; for a 2xx, §13.3.1.4).
///
/// Made inside the connection's `SIPTransport.withConnection` scope, which then runs `receive(_:)` over the
/// connection's `Inbound`: the layer lives as long as its connection is read.
public actor SIPTransactionLayer {
    private struct ClientEntry {
        var bytes: [UInt8]
        var continuation: CheckedContinuation<SIPResponse, any Error>
        var proceeding = false
        var timerTask: SIPArmedTimer?
        var retransmissions = 0
        /// The INVITE of an INVITE transaction (nil for a non-INVITE one): its ACK is built from it.
        var invite: SIPRequest?
        /// Where an INVITE transaction's provisional responses go.
        var provisional: (@Sendable (SIPResponse) -> Void)?
    }

    /// The ACK sent for an INVITE's final answer, sent again when the answer is: a retransmitted final answer
    /// means the ACK was lost (§17.1.1.2 Timer D for a non-2xx, §13.2.2.4 for a 2xx).
    private struct SentAck {
        var bytes: [UInt8]
        var until: ContinuousClock.Instant
    }

    /// A final answer to an incoming INVITE, waiting for its ACK.
    private struct AnswerAwaitingAck {
        var bytes: [UInt8]
        var isSuccess: Bool
        var timerTask: SIPArmedTimer?
    }

    /// The transport carrying the transactions.
    public nonisolated let transport: SIPTransport
    /// The timer values.
    public nonisolated let timers: SIPTimers
    /// New incoming requests (retransmissions are absorbed and not delivered again).
    public nonisolated let requests: AsyncStream<SIPIncomingRequest>
    private let requestsContinuation: AsyncStream<SIPIncomingRequest>.Continuation
    private let logger: Logger
    private var clients: [String: ClientEntry] = [:]
    private var servers: SIPServerTransactionTable
    /// ACKs sent, by the INVITE transaction's client key.
    private var sentAcks: [String: SentAck] = [:]
    /// Final answers to INVITEs not yet acknowledged, by Call-ID and CSeq number.
    private var awaitingAck: [String: AnswerAwaitingAck] = [:]
    /// Why the transport ended, once it has: the error every later request fails with.
    private var ended: SIPError?

    /// Creates a transaction layer over a connection; `receive(_:)` reads what it receives.
    public init(transport: SIPTransport, timers: SIPTimers = .default, logger: Logger) {
        self.transport = transport
        self.timers = timers
        self.logger = logger
        self.servers = SIPServerTransactionTable(lifetime: timers.timerF)
        (requests, requestsContinuation) = AsyncStream<SIPIncomingRequest>.makeStream(
            bufferingPolicy: .bufferingNewest(256))
    }

    /// Reads the connection's messages until it ends, then fails every pending transaction with why it ended and
    /// finishes `requests`. Call it once, with the `Inbound` of this layer's transport.
    public nonisolated func receive(_ inbound: SIPTransport.Inbound) async {
        do throws(SIPError) {
            for try await message in inbound { await handle(message) }
            await transportClosed(SIPError(.transport, "connection closed before a final response"))
        } catch {
            await transportClosed(error)
        }
    }

    /// True once the transport has closed.
    public var isClosed: Bool { ended != nil }

    /// Runs a non-INVITE client transaction and returns the final response (provisional ones are skipped).
    public func send(_ request: SIPRequest) async throws -> SIPResponse {
        if let ended { throw ended }
        guard let branch = request.headers.topVia?.branch else {
            throw SIPError(.invalidArgument, "request has no Via branch")
        }
        let key = SIPTransactionLayer.clientKey(branch: branch, method: request.method)
        guard clients[key] == nil else { throw SIPError(.invalidArgument, "duplicate client transaction branch") }
        let bytes = request.serialized()
        return try await withTaskCancellationHandler {
            try await startClientTransaction(key: key, bytes: bytes)
        } onCancel: {
            Task { await self.fail(key: key, error: CancellationError()) }
        }
    }

    /// Runs an INVITE client transaction and returns its final response; each provisional response goes to
    /// `provisional` as it comes. A non-2xx final answer is acknowledged here (the ACK is the transaction's); a 2xx
    /// is the caller's to acknowledge, with ``acknowledge(_:of:)``. Over UDP the INVITE is sent again from T1 at
    /// doubling intervals until a response comes (Timer A); without any response within 64·T1 (Timer B) it fails
    /// with `.timeout`. Once a provisional response has come, it waits for the final one as long as it takes: the
    /// caller ends a call that rings too long with a CANCEL.
    public func invite(
        _ request: SIPRequest, provisional: @escaping @Sendable (SIPResponse) -> Void
    ) async throws -> SIPResponse {
        if let ended { throw ended }
        guard request.method == "INVITE" else { throw SIPError(.invalidArgument, "not an INVITE") }
        guard let branch = request.headers.topVia?.branch else {
            throw SIPError(.invalidArgument, "request has no Via branch")
        }
        let key = SIPTransactionLayer.clientKey(branch: branch, method: "INVITE")
        guard clients[key] == nil else { throw SIPError(.invalidArgument, "duplicate client transaction branch") }
        let bytes = request.serialized()
        return try await withTaskCancellationHandler {
            try await startClientTransaction(key: key, bytes: bytes, invite: request, provisional: provisional)
        } onCancel: {
            Task { await self.fail(key: key, error: CancellationError()) }
        }
    }

    /// Sends the ACK of a 2xx answer to the INVITE whose top Via branch is `branch`, and sends it again for each
    /// retransmission of that 2xx for the next 64·T1.
    public func acknowledge(_ ack: SIPRequest, of branch: String) throws(SIPError) {
        if let ended { throw ended }
        let bytes = ack.serialized()
        remember(ack: bytes, for: SIPTransactionLayer.clientKey(branch: branch, method: "INVITE"))
        try transport.send(bytes: bytes)
    }

    private func startClientTransaction(
        key: String, bytes: [UInt8], invite: SIPRequest? = nil,
        provisional: (@Sendable (SIPResponse) -> Void)? = nil
    ) async throws -> SIPResponse {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SIPResponse, any Error>) in
            var entry = ClientEntry(bytes: bytes, continuation: continuation, invite: invite, provisional: provisional)
            entry.timerTask = invite == nil ? makeTimer(key: key) : .task(makeInviteTimer(key: key))
            clients[key] = entry
            do throws(SIPError) {
                try transport.send(bytes: bytes)
            } catch  where error.code == .closed {
                // The peer closed the connection before the request went out (a TLS server refusing the
                // handshake, a registrar hanging up): the transaction stays pending until `receive` reads the
                // connection's end and fails it with why, which says more than "closed".
                logger.debug("sip request not sent: connection already closed", metadata: ["sip.transaction": "\(key)"])
            } catch {
                fail(key: key, error: error)
            }
        }
    }

    /// Sends a response to an incoming request and remembers it, so that a retransmitted request gets the latest
    /// response again. A final answer to an INVITE is also sent again over UDP, from T1 at intervals doubling up
    /// to T2, until its ACK comes or for 64·T1; the ACK of a 2xx is then handed on (``requests``) as the dialog's
    /// confirmation, the ACK of any other answer is the transaction's and absorbed.
    public func respond(to incoming: SIPIncomingRequest, with response: SIPResponse) async throws {
        let bytes = response.serialized()
        servers.store(response: bytes, for: incoming.transactionKey)
        if incoming.request.method == "INVITE", response.statusCode >= 200,
            let key = SIPTransactionLayer.ackKey(incoming.request)
        {
            awaitingAck[key]?.timerTask?.cancel()
            awaitingAck[key] = AnswerAwaitingAck(
                bytes: bytes, isSuccess: response.statusCode < 300,
                timerTask: transport.kind.isReliable ? nil : .task(makeAnswerTimer(ackKey: key)))
        }
        try transport.send(bytes: bytes)
    }

    /// Closes the transport and fails pending transactions; `receive(_:)` returns.
    public func close() async {
        // Ended first, so that what `receive` reads of the closing connection does not name the end instead.
        transportClosed(SIPError(.closed, "transaction layer closed"))
        await transport.close()
    }

    // MARK: - internals

    static func clientKey(branch: String, method: String) -> String { branch + "|" + method.uppercased() }

    /// What an INVITE's answer and its ACK share: Call-ID and CSeq number (the ACK of a 2xx has a new branch).
    static func ackKey(_ request: SIPRequest) -> String? {
        guard let callID = request.headers.callID, let cseq = request.headers.cseq else { return nil }
        return "\(callID)|\(cseq.sequence)"
    }

    /// Timers A and B of an INVITE client transaction.
    private func makeInviteTimer(key: String) -> Task<Void, Never> {
        let (timers, reliable) = (self.timers, transport.kind.isReliable)
        return Task { [weak self] in
            let clock = ContinuousClock()
            let timerB = clock.now + timers.timerF
            var interval = timers.t1
            while true {
                do { try await clock.sleep(until: reliable ? timerB : min(clock.now + interval, timerB)) } catch {
                    return
                }
                if clock.now >= timerB {
                    await self?.inviteTimedOut(key: key)
                    return
                }
                // Sent again until any response comes: after a provisional one, the final one takes its time.
                guard let proceeding = await self?.retransmit(key: key), !proceeding else { return }
                interval = interval * 2
            }
        }
    }

    private func inviteTimedOut(key: String) {
        guard let entry = clients[key], !entry.proceeding else { return }
        fail(key: key, error: SIPError(.timeout, "no response to the INVITE within Timer B (\(timers.timerF))"))
    }

    /// Timer G: sends a final answer to an INVITE again until its ACK comes, or gives up at 64·T1 (Timer H).
    private func makeAnswerTimer(ackKey: String) -> Task<Void, Never> {
        let timers = self.timers
        return Task { [weak self] in
            let end = await SIPRetransmissions.run(timers: timers, reliable: false) { [weak self] in
                await self?.resendAnswer(ackKey: ackKey)
            }
            if end == .timedOut { await self?.answerUnacknowledged(ackKey: ackKey) }
        }
    }

    /// Sends an unacknowledged answer again; nil once it is acknowledged. (Not "proceeding": the interval keeps
    /// doubling up to T2.)
    private func resendAnswer(ackKey: String) -> Bool? {
        guard let answer = awaitingAck[ackKey] else { return nil }
        try? transport.send(bytes: answer.bytes)
        return false
    }

    private func answerUnacknowledged(ackKey: String) {
        guard awaitingAck.removeValue(forKey: ackKey) != nil else { return }
        logger.debug("sip answer to an INVITE never acknowledged", metadata: ["sip.transaction": "\(ackKey)"])
    }

    private func remember(ack bytes: [UInt8], for key: String) {
        let now = ContinuousClock.now
        if sentAcks.count >= 64 { sentAcks = sentAcks.filter { $0.value.until > now } }
        sentAcks[key] = SentAck(bytes: bytes, until: now + timers.timerF)
    }

    /// The ACK of a non-2xx final answer to `invite`: the same branch, Request-URI, From, Call-ID and Route, the
    /// answer's To (with its tag), and the INVITE's CSeq number (§17.1.1.3).
    static func ack(of invite: SIPRequest, answer: SIPResponse) -> SIPRequest {
        var ack = SIPRequest(method: "ACK", uri: invite.uri)
        if let top = invite.headers.splitValues("Via").first { ack.headers.add("Via", top) }
        ack.headers.add("Max-Forwards", "70")
        if let from = invite.headers["From"] { ack.headers.add("From", from) }
        if let to = answer.headers["To"] ?? invite.headers["To"] { ack.headers.add("To", to) }
        if let callID = invite.headers["Call-ID"] { ack.headers.add("Call-ID", callID) }
        ack.headers.add("CSeq", SIPCSeq(sequence: invite.headers.cseq?.sequence ?? 1, method: "ACK").description)
        for route in invite.headers.values("Route") { ack.headers.add("Route", route) }
        return ack
    }

    private func makeTimer(key: String) -> SIPArmedTimer {
        let (timers, reliable) = (self.timers, transport.kind.isReliable)
        if reliable {
            // Nothing is sent again: Timer F alone, on the connection's own event loop.
            return SIPArmedTimer.after(timers.timerF, on: transport.eventLoop) { [weak self] in
                Task { [weak self] in
                    await self?.fail(
                        key: key, error: SIPError(.timeout, "no final response within Timer F (\(timers.timerF))"))
                }
            }
        }
        return .task(
            Task { [weak self] in
                let end = await SIPRetransmissions.run(timers: timers, reliable: reliable) { [weak self] in
                    await self?.retransmit(key: key)
                }
                guard end == .timedOut else { return }
                await self?.fail(
                    key: key, error: SIPError(.timeout, "no final response within Timer F (\(timers.timerF))"))
            })
    }

    /// Retransmits a pending request; returns whether it is proceeding, or nil when it is gone.
    private func retransmit(key: String) -> Bool? {
        guard var entry = clients[key] else { return nil }
        entry.retransmissions += 1
        clients[key] = entry
        logger.debug(
            "sip retransmit", metadata: ["sip.transaction": "\(key)", "sip.count": "\(entry.retransmissions)"])
        try? transport.send(bytes: entry.bytes)
        return clients[key]?.proceeding
    }

    private func fail(key: String, error: any Error) {
        guard let entry = clients.removeValue(forKey: key) else { return }
        entry.timerTask?.cancel()
        entry.continuation.resume(throwing: error)
    }

    private func transportClosed(_ error: SIPError) {
        if ended == nil { ended = error }
        let pending = clients
        clients = [:]
        for (_, entry) in pending {
            entry.timerTask?.cancel()
            entry.continuation.resume(throwing: error)
        }
        for (_, answer) in awaitingAck { answer.timerTask?.cancel() }
        awaitingAck = [:]
        requestsContinuation.finish()
    }

    private func handle(_ message: SIPMessage) {
        switch message {
        case .response(let response):
            guard let branch = response.headers.topVia?.branch, let cseq = response.headers.cseq else {
                logger.debug("dropping response without Via branch or CSeq")
                return
            }
            let key = SIPTransactionLayer.clientKey(branch: branch, method: cseq.method)
            guard var entry = clients[key] else {
                if !response.isProvisional, let ack = sentAcks[key], ack.until > .now {
                    // The final answer again: the ACK was lost.
                    try? transport.send(bytes: ack.bytes)
                    return
                }
                logger.debug(
                    "dropping response matching no transaction", metadata: ["sip.status": "\(response.statusCode)"])
                return
            }
            if response.isProvisional {
                entry.proceeding = true
                clients[key] = entry
                entry.provisional?(response)
                return
            }
            clients[key] = nil
            entry.timerTask?.cancel()
            if let invite = entry.invite, response.statusCode >= 300 {
                let ack = SIPTransactionLayer.ack(of: invite, answer: response).serialized()
                remember(ack: ack, for: key)
                try? transport.send(bytes: ack)
            }
            entry.continuation.resume(returning: response)
        case .request(let request) where request.method == "ACK":
            guard let key = SIPTransactionLayer.ackKey(request), let answer = awaitingAck.removeValue(forKey: key)
            else {
                logger.debug(
                    "absorbed ACK matching no answer", metadata: ["sip.call_id": "\(request.headers.callID ?? "")"])
                return
            }
            answer.timerTask?.cancel()
            if answer.isSuccess {
                requestsContinuation.yield(SIPIncomingRequest(request: request, transactionKey: ""))
            }
        case .request(let request):
            switch servers.receive(request) {
            case .new(let key):
                requestsContinuation.yield(SIPIncomingRequest(request: request, transactionKey: key))
            case .retransmission(let stored):
                logger.debug(
                    "absorbed retransmitted request",
                    metadata: [
                        "sip.method": "\(request.method)", "sip.call_id": "\(request.headers.callID ?? "")",
                    ])
                if let stored { try? transport.send(bytes: stored) }
            }
        }
    }
}
