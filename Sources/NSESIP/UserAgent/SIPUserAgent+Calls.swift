import Logging

/// Calls: the caller's INVITE (§13.2), the callee's answers (§13.3), CANCEL (§9), BYE (§15), and the requests
/// inside a dialog. The transactions are ``SIPTransactionLayer``'s; what is here is the UA core's part: tags,
/// Contact, the dialog, the ACK of a 2xx, and matching a CANCEL, an ACK or a BYE to its call.
extension SIPUserAgent {
    /// Places a call: sends the INVITE (answering digest challenges) and returns at once; what happens next comes
    /// on the call's ``SIPCall/events``.
    public func call(_ call: SIPOutgoingCall) async throws -> SIPCall {
        let endpoint = try SIPEndpoint(proxy: call.proxy)
        let layer = try await layer(for: endpoint)
        let callID = call.callID ?? SIPIdentifiers.callID()
        let key = "caller|" + callID
        guard calls[key] == nil else { throw SIPError(.invalidArgument, "a call with this Call-ID is under way") }
        let localTag = SIPIdentifiers.tag()
        var invite = SIPRequest(method: "INVITE", uri: call.to, body: call.body)
        invite.headers.add("Max-Forwards", "70")
        invite.headers.add(
            "From",
            SIPNameAddress(displayName: call.displayName, uri: call.from, parameters: [SIPParameter("tag", localTag)])
                .description)
        invite.headers.add("To", SIPNameAddress(uri: call.to).description)
        invite.headers.add("Call-ID", callID)
        invite.headers.add("Contact", contact(on: layer, user: call.from.user).description)
        invite.headers.add("Allow", "INVITE, ACK, CANCEL, BYE, OPTIONS, MESSAGE")
        if let ua = configuration.userAgent { invite.headers.add("User-Agent", ua) }
        for field in call.extraHeaders where !SIPSyntax.equalsIgnoringCase(field.name, "Content-Type") {
            invite.headers.add(field.name, field.value)
        }
        if let type = call.contentType { invite.headers.add("Content-Type", type) }
        let (events, continuation) = AsyncStream<SIPCallEvent>.makeStream()
        calls[key] = SIPCallState(
            role: .caller, phase: .inviting(proceeding: false, cancelWanted: false), layer: layer,
            events: continuation, invite: invite, localTag: localTag, localBody: call.body,
            localContentType: call.contentType)
        let username = call.username ?? call.from.user ?? ""
        Task {
            await self.runInvite(
                key: key, base: invite, endpoint: endpoint, username: username, password: call.password)
        }
        return SIPCall(role: .caller, key: key, invite: invite, events: events, agent: self)
    }

    // MARK: - the caller's side

    private func runInvite(key: String, base: SIPRequest, endpoint: SIPEndpoint, username: String, password: String?)
        async
    {
        guard let state = calls[key] else { return }
        let (layer, events) = (state.layer, state.events)
        var log = logger
        log[metadataKey: "sip.call_id"] = "\(base.headers.callID ?? "")"
        log.debug("sip call start")
        do {
            let outcome = try await runWithAuth(
                layer: layer, base: base, cseq: 1, endpoint: endpoint, username: username, password: password,
                logger: log
            ) { request in
                self.calls[key]?.invite = request
                return try await layer.invite(request) { [weak self] response in
                    events.yield(.progress(response))
                    Task { await self?.proceeding(key) }
                }
            }
            await finishInvite(key, answer: outcome.response)
        } catch {
            let failure = error as? SIPError ?? SIPError(.transport, "\(error)")
            log.debug("sip call failed", metadata: ["sip.error": "\(failure.code)"])
            calls[key]?.end(with: .failed(failure))
            calls[key] = nil
        }
    }

    /// A provisional answer came: a CANCEL asked for before it can go now.
    private func proceeding(_ key: String) async {
        guard case .inviting(false, let cancelWanted) = calls[key]?.phase else { return }
        calls[key]?.phase = .inviting(proceeding: true, cancelWanted: false)
        if cancelWanted { await sendCancel(key) }
    }

    private func finishInvite(_ key: String, answer: SIPResponse) async {
        guard var state = calls[key] else { return }
        guard (200..<300).contains(answer.statusCode) else {
            state.end(with: .refused(answer))
            calls[key] = nil
            return
        }
        guard let dialog = SIPDialog(caller: state.invite, answer: answer),
            let branch = state.invite.headers.topVia?.branch
        else {
            state.end(with: .failed(SIPError(.unexpectedResponse, "2xx answer without a To tag")))
            calls[key] = nil
            return
        }
        var ack = dialog.ack(sequence: state.invite.headers.cseq?.sequence ?? 1)
        ack.headers.prepend("Via", via(on: state.layer))
        for name in ["Authorization", "Proxy-Authorization"] {
            if let value = state.invite.headers[name] { ack.headers.add(name, value) }
        }
        do throws(SIPError) {
            try await state.layer.acknowledge(ack, of: branch)
        } catch {
            state.end(with: .failed(error))
            calls[key] = nil
            return
        }
        state.dialog = dialog
        state.phase = .established
        state.events.yield(.answered(answer))
        calls[key] = state
    }

    func cancel(_ key: String) async -> Bool {
        guard case .inviting(let proceeding, _) = calls[key]?.phase else { return false }
        guard proceeding else {
            calls[key]?.phase = .inviting(proceeding: false, cancelWanted: true)
            return true
        }
        await sendCancel(key)
        return true
    }

    private func sendCancel(_ key: String) async {
        guard let state = calls[key] else { return }
        let invite = state.invite
        var cancel = SIPRequest(method: "CANCEL", uri: invite.uri)
        if let top = invite.headers.splitValues("Via").first { cancel.headers.add("Via", top) }
        cancel.headers.add("Max-Forwards", "70")
        for name in ["From", "To", "Call-ID"] {
            if let value = invite.headers[name] { cancel.headers.add(name, value) }
        }
        cancel.headers.add("CSeq", SIPCSeq(sequence: invite.headers.cseq?.sequence ?? 1, method: "CANCEL").description)
        for route in invite.headers.values("Route") { cancel.headers.add("Route", route) }
        // The CANCEL's own answer says only that it arrived; the INVITE's 487 ends the call.
        _ = try? await state.layer.send(cancel)
    }

    // MARK: - the callee's side

    func ring(_ key: String) async -> Bool {
        guard case .offered = calls[key]?.phase else { return false }
        calls[key]?.phase = .offered(ringing: true)
        return await answerInvite(key, statusCode: 180)
    }

    func answer(_ key: String, contentType: String?, body: [UInt8]) async -> Bool {
        guard var state = calls[key], case .offered = state.phase,
            let dialog = SIPDialog(callee: state.invite, localTag: state.localTag)
        else { return false }
        state.phase = .answering
        state.dialog = dialog
        state.localBody = body
        state.localContentType = contentType
        calls[key] = state
        return await answerInvite(key, statusCode: 200)
    }

    func reject(_ key: String, statusCode: Int) async -> Bool {
        guard (300..<700).contains(statusCode), case .offered = calls[key]?.phase else { return false }
        let sent = await answerInvite(key, statusCode: statusCode)
        calls[key]?.end(with: nil)
        calls[key] = nil
        return sent
    }

    /// Sends an answer on the INVITE's transaction: with this end's tag, and for 18x and 2xx its Contact and
    /// the INVITE's Record-Route (§12.1.1), for 2xx its session description.
    private func answerInvite(_ key: String, statusCode: Int) async -> Bool {
        guard let state = calls[key], let transaction = state.transaction else { return false }
        var response = state.invite.makeResponse(statusCode: statusCode, toTag: state.localTag)
        if statusCode > 100, statusCode < 300 {
            for route in state.invite.headers.values("Record-Route") { response.headers.add("Record-Route", route) }
            response.headers.add("Contact", contact(on: state.layer, user: state.invite.uri.user).description)
        }
        if (200..<300).contains(statusCode) {
            if let type = state.localContentType { response.headers.add("Content-Type", type) }
            response.body = state.localBody
        }
        do {
            try await state.layer.respond(to: transaction, with: response)
            return true
        } catch {
            return false
        }
    }

    /// Handles INVITE, ACK, CANCEL and BYE received on `layer`.
    func handleCallRequest(_ incoming: SIPIncomingRequest, layer: SIPTransactionLayer) async {
        let request = incoming.request
        switch request.method {
        case "INVITE" where request.headers.to?.tag != nil:
            // A re-INVITE (a session refresh, a hold): the same session again.
            guard let (_, state) = callInDialog(request) else {
                await respond(incoming, on: layer, statusCode: 481)
                return
            }
            var response = request.makeResponse(statusCode: 200)
            response.headers.add("Contact", contact(on: layer, user: request.uri.user).description)
            if let type = state.localContentType { response.headers.add("Content-Type", type) }
            response.body = state.localBody
            try? await layer.respond(to: incoming, with: response)
        case "INVITE":
            await offer(incoming, on: layer)
        case "ACK":
            guard let (key, state) = callInDialog(request), state.phase == .answering else { return }
            calls[key]?.phase = .established
            state.events.yield(.confirmed)
        case "CANCEL":
            let key = "callee|" + SIPServerTransactionTable.key(for: request, method: "INVITE")
            guard let state = calls[key] else {
                await respond(incoming, on: layer, statusCode: 481)
                return
            }
            await respond(incoming, on: layer, statusCode: 200)
            guard case .offered = state.phase else { return }
            _ = await answerInvite(key, statusCode: 487)
            calls[key]?.end(with: .cancelled(reason: request.headers["Reason"]))
            calls[key] = nil
        case "BYE":
            guard let (key, _) = callInDialog(request) else {
                await respond(incoming, on: layer, statusCode: 481)
                return
            }
            await respond(incoming, on: layer, statusCode: 200)
            calls[key]?.end(with: .remoteHangUp)
            calls[key] = nil
        default:
            await respond(incoming, on: layer, statusCode: 501)
        }
    }

    private func offer(_ incoming: SIPIncomingRequest, on layer: SIPTransactionLayer) async {
        let request = incoming.request
        guard configuration.acceptsCalls else {
            await respond(incoming, on: layer, statusCode: 501)
            return
        }
        guard request.headers.from?.tag != nil, let callID = request.headers.callID, !callID.isEmpty,
            request.headers.firstInvalidField == nil
        else {
            await respond(incoming, on: layer, statusCode: 400)
            return
        }
        let key = "callee|" + incoming.transactionKey
        let (events, continuation) = AsyncStream<SIPCallEvent>.makeStream()
        calls[key] = SIPCallState(
            role: .callee, phase: .offered(ringing: false), layer: layer, events: continuation, invite: request,
            transaction: incoming, localTag: SIPIdentifiers.tag())
        logger.debug("sip call offered", metadata: ["sip.call_id": "\(callID)"])
        _ = await answerInvite(key, statusCode: 100)
        incomingCallsContinuation.yield(SIPCall(role: .callee, key: key, invite: request, events: events, agent: self))
    }

    // MARK: - either side

    func hangUp(_ key: String) async -> Int? {
        guard var state = calls[key], state.phase == .established || state.phase == .answering,
            var dialog = state.dialog
        else { return nil }
        var bye = dialog.nextRequest("BYE")
        bye.headers.prepend("Via", via(on: state.layer))
        if let ua = configuration.userAgent { bye.headers.add("User-Agent", ua) }
        state.dialog = dialog
        state.end(with: nil)
        calls[key] = nil
        return (try? await state.layer.send(bye))?.statusCode
    }

    /// Ends the calls of a connection that ended.
    func connectionEnded(_ layer: SIPTransactionLayer, error: SIPError) {
        for (key, state) in calls where state.layer === layer {
            calls[key]?.end(with: .failed(error))
            calls[key] = nil
        }
    }

    /// The call a request inside a dialog belongs to (by Call-ID and both tags).
    private func callInDialog(_ request: SIPRequest) -> (String, SIPCallState)? {
        for (key, state) in calls where state.dialog?.contains(request) ?? false { return (key, state) }
        // An ACK or a BYE crossing the 2xx: the callee's dialog exists from its answer on.
        for (key, state) in calls
        where state.role == .callee && state.invite.headers.callID == request.headers.callID
            && request.headers.to?.tag == state.localTag && request.headers.from?.tag == state.invite.headers.from?.tag
        {
            return (key, state)
        }
        return nil
    }

    private func respond(_ incoming: SIPIncomingRequest, on layer: SIPTransactionLayer, statusCode: Int) async {
        try? await layer.respond(
            to: incoming, with: incoming.request.makeResponse(statusCode: statusCode, toTag: SIPIdentifiers.tag()))
    }

    private func contact(on layer: SIPTransactionLayer, user: String?) -> SIPNameAddress {
        let kind = layer.transport.kind
        let parameters = kind == .udp ? [] : [SIPParameter("transport", kind.rawValue)]
        return SIPNameAddress(
            uri: SIPURI(
                user: user, host: layer.transport.localHost,
                port: layer.transport.localPort, parameters: parameters))
    }

    private func via(on layer: SIPTransactionLayer) -> String {
        SIPVia(
            transport: layer.transport.kind.viaToken, host: layer.transport.localHost,
            port: layer.transport.localPort,
            parameters: [SIPParameter("branch", SIPIdentifiers.branch()), SIPParameter("rport")]
        ).description
    }
}
