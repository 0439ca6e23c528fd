public import Logging

/// Non-INVITE client and server transactions (RFC 3261 §17.1.2, §17.2.2) over one transport.
///
/// Made inside the connection's `SIPTransport.withConnection` scope, which then runs `receive(_:)` over the
/// connection's `Inbound`: the layer lives as long as its connection is read.
public actor SIPTransactionLayer {
    private struct ClientEntry {
        var bytes: [UInt8]
        var continuation: CheckedContinuation<SIPResponse, any Error>
        var proceeding = false
        var timerTask: Task<Void, Never>?
        var retransmissions = 0
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

    private func startClientTransaction(key: String, bytes: [UInt8]) async throws -> SIPResponse {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<SIPResponse, any Error>) in
            var entry = ClientEntry(bytes: bytes, continuation: continuation)
            entry.timerTask = makeTimer(key: key)
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

    /// Sends the final response for an incoming request and remembers it for retransmissions.
    public func respond(to incoming: SIPIncomingRequest, with response: SIPResponse) async throws {
        let bytes = response.serialized()
        if response.statusCode >= 200 { servers.store(response: bytes, for: incoming.transactionKey) }
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

    private func makeTimer(key: String) -> Task<Void, Never> {
        let (timers, reliable) = (self.timers, transport.kind.isReliable)
        return Task { [weak self] in
            let end = await SIPRetransmissions.run(timers: timers, reliable: reliable) { [weak self] in
                await self?.retransmit(key: key)
            }
            guard end == .timedOut else { return }
            await self?.fail(
                key: key, error: SIPError(.timeout, "no final response within Timer F (\(timers.timerF))"))
        }
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
                logger.debug(
                    "dropping response matching no transaction", metadata: ["sip.status": "\(response.statusCode)"])
                return
            }
            if response.isProvisional {
                entry.proceeding = true
                clients[key] = entry
                return
            }
            clients[key] = nil
            entry.timerTask?.cancel()
            entry.continuation.resume(returning: response)
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
