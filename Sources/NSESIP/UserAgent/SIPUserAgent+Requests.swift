import Logging

/// Other out-of-dialog requests (SUBSCRIBE, REFER) and the NOTIFYs of the subscriptions this agent made (RFC 6665),
/// as a chat room client uses them: `send` runs one client transaction, `nextNotify` waits for a NOTIFY of a
/// subscription's dialog (one may arrive before the SUBSCRIBE's 200: it waits in the inbox).
extension SIPUserAgent {
    /// Sends an out-of-dialog request (answering digest challenges) and returns its final response; a SUBSCRIBE's
    /// Call-ID is noted, so the NOTIFYs of its dialog are answered 200 and kept for ``nextNotify(callID:timeout:)``.
    public func send(_ outgoing: SIPOutgoingRequest) async throws -> SIPResponse {
        let endpoint = try SIPEndpoint(proxy: outgoing.proxy)
        let layer = try await layer(for: endpoint)
        let callID = outgoing.callID ?? SIPIdentifiers.callID()
        let method = outgoing.method.uppercased()
        var base = SIPRequest(method: method, uri: outgoing.to, body: outgoing.body)
        base.headers.add("Max-Forwards", "70")
        base.headers.add(
            "From",
            SIPNameAddress(uri: outgoing.from, parameters: [SIPParameter("tag", SIPIdentifiers.tag())]).description)
        base.headers.add("To", SIPNameAddress(uri: outgoing.to).description)
        base.headers.add("Call-ID", callID)
        base.headers.add(
            "Contact",
            SIPNameAddress(
                uri: SIPURI(
                    user: outgoing.from.user, host: layer.transport.localHost, port: layer.transport.localPort,
                    parameters: endpoint.transport == .udp
                        ? [] : [SIPParameter("transport", endpoint.transport.rawValue)])
            ).description)
        if let ua = configuration.userAgent { base.headers.add("User-Agent", ua) }
        for field in outgoing.extraHeaders where !SIPSyntax.equalsIgnoringCase(field.name, "Content-Type") {
            base.headers.add(field.name, field.value)
        }
        if let contentType = outgoing.contentType { base.headers.add("Content-Type", contentType) }
        if method == "SUBSCRIBE" { notifies.expect(callID: callID) }
        let log = logger.adding(["sip.call_id": "\(callID)", "sip.method": "\(method)"])
        let outcome = try await runWithAuth(
            layer: layer, base: base, cseq: 1, endpoint: endpoint,
            username: outgoing.username ?? outgoing.from.user ?? "", password: outgoing.password, logger: log)
        log.debug("sip request done", metadata: ["sip.status": "\(outcome.response.statusCode)"])
        return outcome.response
    }

    /// Waits up to `timeout` for the next NOTIFY of the subscription with this Call-ID; nil when none came.
    public func nextNotify(callID: String, timeout: Duration) async -> SIPRequest? {
        if let waiting = notifies.take(callID: callID) { return waiting }
        let id = notifies.nextID()
        var timer: Task<Void, Never>? = nil
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SIPRequest?, Never>) in
                notifies.wait(id: id, callID: callID, continuation)
                timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    await self?.expireNotifyWaiter(id)
                }
            }
        } onCancel: {
            Task { await self.expireNotifyWaiter(id) }
        }
        timer?.cancel()
        return result
    }

    private func expireNotifyWaiter(_ id: UInt64) { notifies.expire(id: id) }

    /// Takes a NOTIFY of one of this agent's subscriptions (answered 200), or refuses one for a dialog it does not
    /// know (481, RFC 6665 §4.1.3); false when the agent made no subscription at all (the old automatic answer).
    func handleNotify(_ incoming: SIPIncomingRequest, layer: SIPTransactionLayer) async -> Bool {
        guard notifies.isSubscribing else { return false }
        let request = incoming.request
        let known = request.headers.callID.map { notifies.expects(callID: $0) } ?? false
        try? await layer.respond(
            to: incoming, with: request.makeResponse(statusCode: known ? 200 : 481, toTag: SIPIdentifiers.tag()))
        if known { notifies.deliver(request) }
        return true
    }
}

/// The NOTIFYs of an agent's subscriptions: those not yet asked for, by Call-ID, and the callers waiting for one.
struct SIPNotifyInbox {
    private var subscriptions: Set<String> = []
    private var pending: [String: [SIPRequest]] = [:]
    private var waiters: [UInt64: (callID: String, continuation: CheckedContinuation<SIPRequest?, Never>)] = [:]
    private var lastID: UInt64 = 0
    private static let capacity = 32

    var isSubscribing: Bool { !subscriptions.isEmpty }

    mutating func expect(callID: String) { subscriptions.insert(callID) }

    func expects(callID: String) -> Bool { subscriptions.contains(callID) }

    mutating func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    mutating func take(callID: String) -> SIPRequest? {
        guard var queue = pending[callID], !queue.isEmpty else { return nil }
        let first = queue.removeFirst()
        pending[callID] = queue
        return first
    }

    mutating func wait(id: UInt64, callID: String, _ continuation: CheckedContinuation<SIPRequest?, Never>) {
        waiters[id] = (callID, continuation)
    }

    mutating func deliver(_ request: SIPRequest) {
        let callID = request.headers.callID ?? ""
        if let id = waiters.filter({ $0.value.callID == callID }).keys.min(),
            let waiter = waiters.removeValue(forKey: id)
        {
            waiter.continuation.resume(returning: request)
            return
        }
        pending[callID, default: []].append(request)
        if pending[callID, default: []].count > Self.capacity { pending[callID]?.removeFirst() }
    }

    mutating func expire(id: UInt64) { waiters.removeValue(forKey: id)?.continuation.resume(returning: nil) }

    /// Resumes every waiter with nil (the agent is closing).
    mutating func closeAll() {
        for (_, waiter) in waiters { waiter.continuation.resume(returning: nil) }
        waiters = [:]
        pending = [:]
    }
}
