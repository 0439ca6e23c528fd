public import Logging
public import NIOCore
import NIOPosix

/// A SIP user agent: REGISTER, out-of-dialog MESSAGE, automatic answers to incoming MESSAGE/OPTIONS/NOTIFY, and
/// calls, placed (``call(_:)``) and received (``incomingCalls``, with `acceptsCalls`), in `SIPUserAgent+Calls`.
public actor SIPUserAgent {
    /// One open connection: its transaction layer, and the task that runs it. The channel is open exactly while
    /// the task runs (`SIPTransport.withConnection`), which reads the connection into the layer and answers the
    /// requests the layer hands on.
    private struct Connection {
        let layer: SIPTransactionLayer
        let task: Task<Void, Never>
    }

    /// The configuration in use.
    public nonisolated let configuration: SIPUserAgentConfiguration
    /// MESSAGE requests received on any connection, each delivered once (by transaction and by Call-ID/CSeq/From-tag); cancelling an iterating task ends the stream.
    public nonisolated let messages: AsyncStream<SIPReceivedMessage>
    private let messagesContinuation: AsyncStream<SIPReceivedMessage>.Continuation
    /// Calls received (with `acceptsCalls`), each to be answered, rejected or left to ring until cancelled.
    public nonisolated let incomingCalls: AsyncStream<SIPCall>
    let incomingCallsContinuation: AsyncStream<SIPCall>.Continuation
    /// The calls under way, by key (`caller|Call-ID`, `callee|` and the INVITE's server transaction).
    var calls: [String: SIPCallState] = [:]
    private let group: any EventLoopGroup
    private let ownsGroup: Bool
    let logger: Logger
    private var connections: [SIPEndpoint: Connection] = [:]
    private var connecting: [SIPEndpoint: Task<Connection, any Error>] = [:]
    /// The tasks of connections replaced after they closed, awaited by `close()`.
    private var retired: [Task<Void, Never>] = []
    private var registerDialogs: [String: (callID: String, cseq: UInt32)] = [:]
    private var messageCSeqs: [String: UInt32] = [:]
    private var seenMessageKeys: Set<String> = []
    private var seenMessageOrder: [String] = []
    private var nonceCounts: [String: UInt32] = [:]
    private var cachedChallenges: [String: (challenge: DigestChallenge, isProxy: Bool)] = [:]
    private var closed = false
    private var inbox: [SIPReceivedMessage] = []
    private var waiters: [UInt64: CheckedContinuation<SIPReceivedMessage?, Never>] = [:]
    private var nextWaiterID: UInt64 = 0
    private static let inboxCapacity = 64
    /// The NOTIFYs of the subscriptions this agent made (`SIPUserAgent+Requests`).
    var notifies = SIPNotifyInbox()

    /// One event-loop thread for the life of the process, for user agents that come and go in a process that lives
    /// on (a warm extension fetching push after push): no thread started and joined for each of them.
    public static let processEventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// An event loop of the agent's group: where its connections are served, and where a caller's timers can run
    /// without a task of their own (``SIPArmedTimer``).
    public nonisolated var eventLoop: any EventLoop { group.next() }

    /// Creates a user agent; without a group it owns a one-thread event loop group, released by `close()`. It logs
    /// to `logger`, the caller's (a library makes none of its own).
    public init(
        configuration: SIPUserAgentConfiguration = SIPUserAgentConfiguration(),
        eventLoopGroup: (any EventLoopGroup)? = nil, logger: Logger
    ) {
        self.configuration = configuration
        if let eventLoopGroup {
            group = eventLoopGroup
            ownsGroup = false
        } else {
            group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            ownsGroup = true
        }
        self.logger = logger
        (messages, messagesContinuation) = AsyncStream<SIPReceivedMessage>.makeStream(
            bufferingPolicy: .bufferingNewest(256))
        (incomingCalls, incomingCallsContinuation) = AsyncStream<SIPCall>.makeStream(
            bufferingPolicy: .bufferingNewest(16))
    }

    /// Waits up to `timeout` for the next received MESSAGE (queued separately from `messages`; use one of the two).
    public func nextMessage(timeout: Duration) async -> SIPReceivedMessage? {
        if !inbox.isEmpty { return inbox.removeFirst() }
        if closed { return nil }
        let id = nextWaiterID
        nextWaiterID += 1
        var timer: Task<Void, Never>? = nil
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SIPReceivedMessage?, Never>) in
                waiters[id] = continuation
                timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    await self?.expireWaiter(id)
                }
            }
        } onCancel: {
            Task { await self.expireWaiter(id) }
        }
        timer?.cancel()
        return result
    }

    /// Returns the (possibly new) transport for a proxy URI; useful to learn the local address.
    public func transport(for proxy: SIPURI) async throws -> SIPTransport {
        try await layer(for: SIPEndpoint(proxy: proxy)).transport
    }

    /// Registers a Contact for an AOR, answering up to `maxAuthAttempts` digest challenges.
    public func register(_ registration: SIPRegistration) async throws -> SIPRegistrationResult {
        let endpoint = try SIPEndpoint(proxy: registration.proxy)
        let layer = try await layer(for: endpoint)
        let transport = layer.transport
        let aorKey = registration.aor.addressOfRecord.description
        var dialog = registerDialogs[aorKey] ?? (callID: registration.callID ?? SIPIdentifiers.callID(), cseq: 0)
        if let fixed = registration.callID, fixed != dialog.callID { dialog = (fixed, 0) }
        dialog.cseq += 1

        var contactParams: [SIPParameter] = []
        if endpoint.transport != .udp, !registration.contactURIParameters.contains(parameter: "transport") {
            contactParams.append(SIPParameter("transport", endpoint.transport.rawValue))
        }
        contactParams.append(contentsOf: registration.contactURIParameters)
        let contactURI = SIPURI(
            scheme: .sip, user: registration.aor.user, host: transport.localHost,
            port: transport.localPort, parameters: contactParams)
        let contact = SIPNameAddress(uri: contactURI, parameters: registration.contactHeaderParameters)

        let registrar = SIPURI(
            scheme: registration.aor.scheme, host: registration.aor.host, port: registration.aor.port)
        var base = SIPRequest(method: "REGISTER", uri: registrar)
        base.headers.add("Max-Forwards", "70")
        base.headers.add(
            "From",
            SIPNameAddress(
                uri: registration.aor.addressOfRecord, parameters: [SIPParameter("tag", SIPIdentifiers.tag())]
            ).description)
        base.headers.add("To", SIPNameAddress(uri: registration.aor.addressOfRecord).description)
        base.headers.add("Call-ID", dialog.callID)
        base.headers.add("Contact", contact.description)
        base.headers.add("Expires", String(registration.expires))
        if let ua = configuration.userAgent { base.headers.add("User-Agent", ua) }
        for field in registration.extraHeaders { base.headers.add(field.name, field.value) }

        let log = logger.adding(["sip.call_id": "\(dialog.callID)", "sip.endpoint": "\(endpoint)"])
        log.debug("sip register start")
        let username = registration.username ?? registration.aor.user ?? ""
        // Reserve CSeq numbers so a refresh after a failed attempt still uses a higher CSeq.
        registerDialogs[aorKey] = (dialog.callID, dialog.cseq + UInt32(2 * configuration.maxAuthAttempts + 3))
        var outcome = try await runWithAuth(
            layer: layer, base: base, cseq: dialog.cseq, endpoint: endpoint,
            username: username, password: registration.password, logger: log)
        // 423 Interval Too Brief: retry once with the server's Min-Expires (RFC 3261 §10.2.8).
        if outcome.response.statusCode == 423,
            let minimum = outcome.response.headers["Min-Expires"].flatMap({ SIPSyntax.parseInt(Substring($0)) }),
            minimum > registration.expires
        {
            base.headers.set("Expires", String(minimum))
            let first = outcome
            outcome = try await runWithAuth(
                layer: layer, base: base, cseq: first.cseq + 1, endpoint: endpoint,
                username: username, password: registration.password, logger: log)
            outcome.count += first.count
            outcome.elapsed += first.elapsed
        }
        dialog.cseq = outcome.cseq
        registerDialogs[aorKey] = dialog
        let response = outcome.response
        var granted: Int? = nil
        for c in response.headers.contacts
        where c.uri.host == contactURI.host && c.uri.port == contactURI.port && c.uri.user == contactURI.user {
            granted = c.expires
            break
        }
        if granted == nil { granted = response.headers.expires }
        log.debug(
            "sip register done", metadata: ["sip.status": "\(response.statusCode)", "sip.requests": "\(outcome.count)"])
        let via = response.headers.topVia
        return SIPRegistrationResult(
            statusCode: response.statusCode, reasonPhrase: response.reasonPhrase, expires: granted,
            requestCount: outcome.count, elapsed: outcome.elapsed, callID: dialog.callID,
            contact: contact, response: response, observedHost: via?.received, observedPort: via?.rport)
    }

    /// Sends an out-of-dialog MESSAGE, answering digest challenges; returns the final status and Call-ID.
    public func sendMessage(_ message: SIPOutgoingMessage) async throws -> SIPSendResult {
        let endpoint = try SIPEndpoint(proxy: message.proxy)
        let layer = try await layer(for: endpoint)
        let callID = message.callID ?? SIPIdentifiers.callID()
        var base = SIPRequest(method: "MESSAGE", uri: message.to, body: message.body)
        base.headers.add("Max-Forwards", "70")
        base.headers.add(
            "From",
            SIPNameAddress(uri: message.from, parameters: [SIPParameter("tag", SIPIdentifiers.tag())]).description)
        base.headers.add("To", SIPNameAddress(uri: message.to).description)
        base.headers.add("Call-ID", callID)
        if let ua = configuration.userAgent { base.headers.add("User-Agent", ua) }
        for field in message.extraHeaders where !SIPSyntax.equalsIgnoringCase(field.name, "Content-Type") {
            base.headers.add(field.name, field.value)
        }
        base.headers.add("Content-Type", message.contentType)
        let log = logger.adding(["sip.call_id": "\(callID)", "sip.endpoint": "\(endpoint)"])
        log.debug("sip message send start", metadata: ["sip.body_size": "\(message.body.count)"])
        // A reused Call-ID continues its CSeq sequence (numbers reserved up front, see register).
        if messageCSeqs.count > 256 { messageCSeqs = [:] }
        let firstCSeq = (messageCSeqs[callID] ?? 0) + 1
        messageCSeqs[callID] = firstCSeq + UInt32(configuration.maxAuthAttempts)
        let outcome = try await runWithAuth(
            layer: layer, base: base, cseq: firstCSeq, endpoint: endpoint,
            username: message.username ?? message.from.user ?? "",
            password: message.password, logger: log)
        log.debug("sip message send done", metadata: ["sip.status": "\(outcome.response.statusCode)"])
        return SIPSendResult(
            statusCode: outcome.response.statusCode, reasonPhrase: outcome.response.reasonPhrase,
            callID: callID, requestCount: outcome.count, elapsed: outcome.elapsed, response: outcome.response)
    }

    /// Closes every connection, finishes `messages` and shuts down an owned event loop group.
    public func close() async {
        guard !closed else { return }
        closed = true
        // Wait for everything that may still touch the event loops before they shut down: a connection attempt
        // (its resolver and timers schedule on the loop) and each connection's task, which returns once its channel
        // is closed.
        let attempts = connecting
        connecting = [:]
        var current = Array(connections.values)
        connections = [:]
        for (_, attempt) in attempts { if let connection = try? await attempt.value { current.append(connection) } }
        // Closing a layer closes its channel and finishes its requests: the connection's task then returns.
        for connection in current { await connection.layer.close() }
        for connection in current { await connection.task.value }
        let replaced = retired
        retired = []
        for task in replaced { await task.value }
        messagesContinuation.finish()
        incomingCallsContinuation.finish()
        for key in calls.keys { calls[key]?.end(with: .failed(SIPError(.closed, "user agent is closed"))) }
        calls = [:]
        let pendingWaiters = waiters
        waiters = [:]
        for (_, waiter) in pendingWaiters { waiter.resume(returning: nil) }
        notifies.closeAll()
        if ownsGroup {
            try? await group.shutdownGracefully()
        }
    }

    // MARK: - internals

    func layer(for endpoint: SIPEndpoint) async throws -> SIPTransactionLayer {
        guard !closed else { throw SIPError(.closed, "user agent is closed") }
        if let existing = connections[endpoint] {
            if await !existing.layer.isClosed, existing.layer.transport.isActive || endpoint.transport == .udp {
                return existing.layer
            }
            // Its channel is closed or closing: the task ends on its own.
            connections[endpoint] = nil
            retired.append(existing.task)
        }
        if let pending = connecting[endpoint] { return try await pending.value.layer }
        let task = Task<Connection, any Error> { try await self.open(endpoint) }
        connecting[endpoint] = task
        defer { connecting[endpoint] = nil }
        let connection = try await task.value
        if closed {
            await connection.layer.close()
            await connection.task.value
            throw SIPError(.closed, "user agent is closed")
        }
        connections[endpoint] = connection
        return connection.layer
    }

    /// Opens a connection to `endpoint` in a task of its own, and returns once it is open (or could not be).
    private func open(_ endpoint: SIPEndpoint) async throws -> Connection {
        let configuration = self.configuration
        let group = self.group
        let logger = self.logger
        let answer: @Sendable (SIPIncomingRequest, SIPTransactionLayer) async -> Void = { [weak self] in
            await self?.handleIncoming($0, layer: $1)
        }
        let ended: @Sendable (SIPTransactionLayer) async -> Void = { [weak self] layer in
            await self?.connectionEnded(layer, error: SIPError(.closed, "connection closed"))
        }
        var runner: Task<Void, Never>? = nil
        let layer = try await withCheckedThrowingContinuation {
            (opened: CheckedContinuation<SIPTransactionLayer, any Error>) in
            runner = Task {
                await Self.run(
                    endpoint, configuration: configuration, group: group, logger: logger, opened: opened,
                    answer: answer, ended: ended)
            }
        }
        guard let runner else { throw SIPError(.closed, "connection task missing") }
        return Connection(layer: layer, task: runner)
    }

    /// Runs one connection: connects, hands its transaction layer to `opened`, then reads the connection into the
    /// layer and answers the requests it hands on, until the connection ends; its channel is closed on return. A
    /// connection that cannot be opened fails `opened`.
    private static func run(
        _ endpoint: SIPEndpoint, configuration: SIPUserAgentConfiguration, group: any EventLoopGroup,
        logger: Logger, opened: CheckedContinuation<SIPTransactionLayer, any Error>,
        answer: @escaping @Sendable (SIPIncomingRequest, SIPTransactionLayer) async -> Void,
        ended: @escaping @Sendable (SIPTransactionLayer) async -> Void
    ) async {
        do {
            try await SIPTransport.withConnection(
                to: endpoint, tls: configuration.tls, limits: configuration.limits, group: group,
                connectTimeout: configuration.connectTimeout, trace: configuration.trace, logger: logger
            ) { transport, inbound in
                let layer = SIPTransactionLayer(transport: transport, timers: configuration.timers, logger: logger)
                opened.resume(returning: layer)
                await withDiscardingTaskGroup { tasks in
                    tasks.addTask {
                        for await incoming in layer.requests { await answer(incoming, layer) }
                    }
                    await layer.receive(inbound)
                }
                await ended(layer)
            }
        } catch {
            // Only an unopened connection throws: `opened` has not been resumed.
            opened.resume(throwing: error)
        }
    }

    private func handleIncoming(_ incoming: SIPIncomingRequest, layer: SIPTransactionLayer) async {
        let request = incoming.request
        let method = request.method.uppercased()
        let log = logger.adding(["sip.call_id": "\(request.headers.callID ?? "")", "sip.method": "\(method)"])
        let status: Int?
        switch method {
        case "MESSAGE":
            guard let callID = request.headers.callID, !callID.isEmpty else {
                try? await layer.respond(
                    to: incoming, with: request.makeResponse(statusCode: 400, toTag: SIPIdentifiers.tag()))
                return
            }
            // A header value with NUL or another control character is refused, as the server refuses it: such a
            // Call-ID or address could not be shown, stored or reported faithfully. The value is never quoted.
            if let field = request.headers.firstInvalidField {
                log.debug("sip message refused: control character in a header", metadata: ["sip.header": "\(field)"])
                try? await layer.respond(
                    to: incoming,
                    with: request.makeResponse(
                        statusCode: 400, reasonPhrase: "Invalid \(field) Header", toTag: SIPIdentifiers.tag()))
                return
            }
            log.debug("sip message received", metadata: ["sip.body_size": "\(request.body.count)"])
            // Same Call-ID/CSeq/From-tag in a new transaction (e.g. redelivery with a new branch): answered, not re-delivered.
            let dedupKey = "\(callID)|\(request.headers.cseq?.description ?? "")|\(request.headers.from?.tag ?? "")"
            let received = SIPReceivedMessage(
                callID: callID, from: request.headers.from, to: request.headers.to,
                headers: request.headers, contentType: request.headers.contentType,
                body: request.body, request: request)
            let answer: SIPMessageAnswer?
            if seenMessageKeys.contains(dedupKey) {
                answer = SIPMessageAnswer(statusCode: configuration.autoAnswerStatus ?? 200)
            } else if let acceptor = configuration.messageAcceptor {
                // Answered only once the consumer has decided: a 200 means the message is kept.
                answer = await acceptor(received)
            } else {
                answer = configuration.autoAnswerStatus.map { SIPMessageAnswer(statusCode: $0) }
            }
            if let answer {
                try? await layer.respond(
                    to: incoming,
                    with: request.makeResponse(
                        statusCode: answer.statusCode, reasonPhrase: answer.reasonPhrase, toTag: SIPIdentifiers.tag()))
            }
            guard !seenMessageKeys.contains(dedupKey) else {
                log.debug("sip duplicate message not delivered again")
                return
            }
            if let answer, configuration.messageAcceptor != nil, !(200..<300).contains(answer.statusCode) {
                log.debug("sip message refused by its consumer", metadata: ["sip.status": "\(answer.statusCode)"])
                return
            }
            seenMessageKeys.insert(dedupKey)
            seenMessageOrder.append(dedupKey)
            if seenMessageOrder.count > 256 { seenMessageKeys.remove(seenMessageOrder.removeFirst()) }
            messagesContinuation.yield(received)
            deliverToWaiter(received)
            return
        case "INVITE", "ACK", "CANCEL", "BYE":
            await handleCallRequest(incoming, layer: layer)
            return
        case "NOTIFY":
            if await handleNotify(incoming, layer: layer) { return }
            status = configuration.autoAnswerStatus
        case "OPTIONS":
            status = configuration.autoAnswerStatus
        default:
            status = 501
        }
        if let status {
            log.debug("sip request answered", metadata: ["sip.status": "\(status)"])
            try? await layer.respond(
                to: incoming, with: request.makeResponse(statusCode: status, toTag: SIPIdentifiers.tag()))
        }
    }

    private func deliverToWaiter(_ message: SIPReceivedMessage) {
        if let id = waiters.keys.min(), let waiter = waiters.removeValue(forKey: id) {
            waiter.resume(returning: message)
            return
        }
        inbox.append(message)
        if inbox.count > SIPUserAgent.inboxCapacity { inbox.removeFirst() }
    }

    private func expireWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(returning: nil)
    }

    /// Sends `base` (a new Via branch and CSeq each time) until it gets an answer other than a digest challenge,
    /// answering each challenge; `exchange` runs one attempt's transaction (a non-INVITE one by default).
    func runWithAuth(
        layer: SIPTransactionLayer, base: SIPRequest, cseq startCSeq: UInt32, endpoint: SIPEndpoint,
        username: String, password: String?, logger log: Logger,
        exchange: ((SIPRequest) async throws -> SIPResponse)? = nil
    )
        async throws -> (response: SIPResponse, count: Int, elapsed: Duration, cseq: UInt32)
    {
        let clock = ContinuousClock()
        let start = clock.now
        let transport = layer.transport
        let cacheKey = "\(endpoint)|\(username)"
        var cseq = startCSeq
        var answered = 0
        var count = 0
        var authorization: (name: String, value: String)? = nil
        if let password, let cached = cachedChallenges[cacheKey] {
            authorization = makeAuthorization(
                cached.challenge, isProxy: cached.isProxy, username: username,
                password: password, method: base.method, uri: base.uri.description)
        }
        while true {
            var request = base
            let via = SIPVia(
                transport: endpoint.transport.viaToken, host: transport.localHost, port: transport.localPort,
                parameters: [SIPParameter("branch", SIPIdentifiers.branch()), SIPParameter("rport")])
            request.headers.prepend("Via", via.description)
            request.headers.set("CSeq", SIPCSeq(sequence: cseq, method: base.method).description)
            if let authorization { request.headers.set(authorization.name, authorization.value) }
            count += 1
            let response: SIPResponse
            if let exchange { response = try await exchange(request) } else { response = try await layer.send(request) }
            guard response.statusCode == 401 || response.statusCode == 407 else {
                return (response, count, clock.now - start, cseq)
            }
            log.debug("sip challenge received", metadata: ["sip.status": "\(response.statusCode)"])
            guard let password else {
                throw SIPError(
                    .authenticationFailed, "server sent \(response.statusCode) but no password is configured")
            }
            guard answered < configuration.maxAuthAttempts else {
                cachedChallenges[cacheKey] = nil
                throw SIPError(
                    .authenticationFailed,
                    "credentials rejected after \(answered) authenticated attempts (last status \(response.statusCode))"
                )
            }
            let isProxy = response.statusCode == 407
            let challenges = response.headers.values(isProxy ? "Proxy-Authenticate" : "WWW-Authenticate")
                .compactMap { try? DigestChallenge(parsing: $0) }
            guard
                let challenge = challenges.first(where: { $0.algorithm == .sha256 || $0.algorithm == .sha256Sess })
                    ?? challenges.first
            else {
                throw SIPError(.authenticationFailed, "no usable Digest challenge in \(response.statusCode) response")
            }
            answered += 1
            cachedChallenges[cacheKey] = (challenge, isProxy)
            authorization = makeAuthorization(
                challenge, isProxy: isProxy, username: username, password: password,
                method: base.method, uri: base.uri.description)
            cseq += 1
        }
    }

    private func makeAuthorization(
        _ challenge: DigestChallenge, isProxy: Bool, username: String, password: String,
        method: String, uri: String
    ) -> (name: String, value: String) {
        if nonceCounts.count > 64 { nonceCounts = [:] }
        let nc = (nonceCounts[challenge.nonce] ?? 0) + 1
        nonceCounts[challenge.nonce] = nc
        let creds = DigestCredentials.answer(
            challenge, username: username, password: password, method: method,
            uri: uri, nonceCount: nc)
        return (isProxy ? "Proxy-Authorization" : "Authorization", creds.description)
    }
}
