import Logging
import NSESIP

/// The call path (Flexisip's call fork): an INVITE for a device that sleeps is held and pushed for, and goes to
/// each device that registers while the call waits (online devices without push parameters get it at once); the
/// first 2xx wins; CANCEL, the call fork timeout, ACK and the dialog's requests (BYE, re-INVITE) are handled here. `HeldCall` is a call's state,
/// `CallTable` the calls, `CallMessages` what is sent.
extension SIPServer {
    /// The step of each call the server knows, by Call-ID (ended calls stay a while).
    public func callSteps() -> [String: CallStep] { calls.steps }

    // MARK: - the caller's INVITE

    func handleInvite(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard let callID = request.headers.callID, let from = request.headers.from,
            let branch = request.headers.topVia?.branch
        else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 400)
            return
        }
        if let existing = calls[callID] {
            // The same INVITE over a new transaction key (its retransmission after the table forgot it) is
            // absorbed; another INVITE with this Call-ID is a loop or a clash.
            if existing.callerBranch != branch {
                respond(request, flow: flow, transactionKey: transactionKey, status: 482)
            }
            return
        }
        if let hops = CallMessages.maxForwards(request), hops <= 0 {
            respond(request, flow: flow, transactionKey: transactionKey, status: 483)
            return
        }
        let aor = SIPServer.aorKey(request.uri)
        let log = logger.adding(["sip.call_id": "\(callID)", "sip.method": "INVITE", "sip.aor": "\(aor)"])
        let active = registrar.activeBindings(aor: aor)
        let pushable = active.filter { $0.push != nil }
        let live = active.filter { $0.push == nil && $0.isLive }
        guard !pushable.isEmpty || !live.isEmpty else {
            let known = registrar.isKnown(aor: aor, user: request.uri.user)
            log.debug("sip server call for unreachable aor", metadata: ["sip.known": "\(known)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: known ? 480 : 404)
            return
        }
        respond(request, flow: flow, transactionKey: transactionKey, status: 100)
        let call = HeldCall(
            callID: callID, aor: aor, invite: request, callerFlow: flow, transactionKey: transactionKey,
            callerBranch: branch, callerTag: from.tag ?? "", forkTimer: StopSignal())
        calls[callID] = call
        startForkTimer(call)
        // Devices online without push parameters ring at once; the sleeping ones are pushed and get the INVITE
        // when they register.
        for binding in live {
            if let liveFlow = binding.flow { forward(callID, to: binding.contact.uri, over: liveFlow) }
        }
        guard !pushable.isEmpty else { return }
        if case .held = calls[callID]?.phase { note(call, .held) }
        let e2ee = configuration.e2eeCalls || configuration.e2eeCallsFor.contains(aor)
        let sealedOffer = e2ee ? SealedCallOffer.find(in: request) : nil
        log.info("sip server call held", metadata: ["sip.sealed_offer": "\(sealedOffer != nil)"])
        for binding in pushable {
            pushCall(.incoming, invite: request, aor: aor, binding: binding, sealedOffer: sealedOffer)
        }
        let alerted = pushable.filter { $0.push.map(pushSender.ringsByAlert) ?? false }
        if sealedOffer == nil, !alerted.isEmpty, configuration.callRemotePushInterval > .zero {
            repeatAlerts(callID, to: alerted)
        }
    }

    /// Pushes the ringing alert again every `callRemotePushInterval` while the call is held (Flexisip's
    /// call-remote-push-interval: an alert, unlike PushKit, may go unnoticed; the same collapse id replaces it).
    private func repeatAlerts(_ callID: String, to bindings: [Registrar.Binding]) {
        let interval = configuration.callRemotePushInterval
        spawn { [weak self] in
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                guard let self, await self.pushAgainIfHeld(callID, to: bindings) else { return }
            }
        }
    }

    /// Pushes a held call's ringing alert again; false once the call is no longer held.
    private func pushAgainIfHeld(_ callID: String, to bindings: [Registrar.Binding]) -> Bool {
        guard let call = calls[callID], case .held = call.phase else { return false }
        for binding in bindings { pushCall(.incoming, invite: call.invite, aor: call.aor, binding: binding) }
        return true
    }

    /// Sends every call of `aor` still waiting for a device to the device that just registered over `flow` (a
    /// new leg, unless one is already open over that flow).
    func deliverHeldCalls(aor: String, flow: ServerFlow, contact: SIPURI) {
        for callID in calls.waiting(aor: aor) {
            guard let call = calls[callID], !call.legs.contains(where: { $0.isOpen && $0.flow.key == flow.key })
            else { continue }
            forward(callID, to: contact, over: flow)
        }
    }

    /// Sends the caller's INVITE to one device as an INVITE client transaction (a new leg; Timer A
    /// retransmissions over UDP; at Timer B the leg is given up, and the call is held again if it has no other).
    private func forward(_ callID: String, to contact: SIPURI, over flow: ServerFlow) {
        guard var call = calls[callID], call.isPending else { return }
        let branch = SIPIdentifiers.branch()
        let invite = CallMessages.forwardedInvite(
            call.invite, to: contact, over: flow, from: call.callerFlow, branch: branch)
        let bytes = invite.serialized()
        let stop = StopSignal()
        call.legs.append(HeldCall.DeviceLeg(branch: branch, flow: flow, invite: invite, retransmission: stop))
        call.phase = .forking
        calls[callID] = call
        flow.send(bytes)
        note(call, .forwarded)
        logger.info(
            "sip server call sent to device",
            metadata: [
                "sip.call_id": "\(callID)", "sip.aor": "\(call.aor)", "sip.transport": "\(flow.kind.rawValue)",
                "sip.legs": "\(call.legs.count)",
            ])
        retransmitInvite(bytes, over: flow, until: stop) { server in
            await server.legFailed(callID: callID, branch: branch)
        }
    }

    /// The device never answered the INVITE (Timer B), or its connection closed first: the leg is given up, and
    /// a call left with no open leg waits for the next REGISTER, until the call fork timeout.
    private func legFailed(callID: String, branch: String) {
        guard var call = calls[callID], let index = call.legIndex(branch), call.legs[index].isOpen else { return }
        call.legs[index].final = 408
        switch call.phase {
        case .forking where !call.hasOpenLeg && call.best != nil:
            // Another device declined: with no leg left, the caller hears that answer now.
            settleWithBest(&call)
        case .forking where !call.hasOpenLeg:
            call.phase = .held
            logger.info("sip server call not taken by the device, held again", metadata: ["sip.call_id": "\(callID)"])
        case .cancelling where !call.hasOpenLeg:
            call.finish()
        default:
            break
        }
        calls[callID] = call
    }

    private func startForkTimer(_ call: HeldCall) {
        let (timer, timeout, callID) = (call.forkTimer, configuration.callForkTimeout, call.callID)
        spawn { [weak self] in
            let fired = await timer.run { () async -> Bool? in
                do { try await Task.sleep(for: timeout) } catch { return nil }
                return true
            }
            if fired != nil { await self?.end(callID, status: 408, step: .timedOut) }
        }
    }

    // MARK: - CANCEL and ACK from the caller

    func handleCancel(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard let callID = request.headers.callID, let call = calls[callID],
            call.callerBranch == request.headers.topVia?.branch
        else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 481)
            return
        }
        respond(request, flow: flow, transactionKey: transactionKey, status: 200)
        end(callID, status: 487, step: .cancelled)
    }

    /// Ends a call still waiting for its final answer: the caller hears `status` from the server, its open legs
    /// are cancelled (each once its device has answered provisionally, RFC 3261 §9.1), and the devices woken by
    /// alerts that never got the INVITE get Flexisip's missed-call notice.
    private func end(_ callID: String, status: Int, step: CallStep) {
        guard var call = calls[callID], call.isPending else { return }
        call.forkTimer.stop()
        cancelOpenLegs(of: &call, except: nil)
        if call.hasOpenLeg { call.phase = .cancelling } else { call.finish() }
        calls[callID] = call
        answerCaller(
            callID,
            with: ServerResponse.make(
                to: call.invite, over: call.callerFlow, status: status, reason: nil, extraHeaders: [], contacts: [],
                serverHeader: configuration.serverHeader))
        note(call, step, status: status)
        logger.info(
            "sip server call ended before an answer",
            metadata: ["sip.call_id": "\(callID)", "sip.status": "\(status)", "sip.legs": "\(call.legs.count)"])
        if call.hasOpenLeg { giveUpCancellingLater(callID) }
        notify(.missed, call: call, sparing: call.legs.map(\.flow.key))
    }

    /// Cancels every open leg but `except`: at once when its device answered provisionally, else when it does.
    /// `reason` (RFC 3326) tells the devices why, as Flexisip does: a call answered or declined on another device
    /// (`cause=200`, `cause=600`/`603`) is not a missed call.
    private func cancelOpenLegs(of call: inout HeldCall, except branch: String?, reason: String? = nil) {
        for index in call.legs.indices where call.legs[index].isOpen && call.legs[index].branch != branch {
            call.legs[index].cancelReason = reason
            if call.legs[index].proceeding {
                call.legs[index].flow.send(
                    CallMessages.cancel(of: call.legs[index].invite, reason: reason).serialized())
            } else {
                call.legs[index].cancelOwed = true
            }
        }
    }

    /// Devices that never answer a CANCEL finally are given up on after Timer F.
    private func giveUpCancellingLater(_ callID: String) {
        let wait = configuration.timers.timerF
        spawn { [weak self] in
            do { try await Task.sleep(for: wait) } catch { return }
            await self?.giveUpCancelling(callID)
        }
    }

    private func giveUpCancelling(_ callID: String) {
        guard var call = calls[callID], case .cancelling = call.phase else { return }
        call.finish()
        calls[callID] = call
    }

    /// Sends Flexisip's final notice to the AOR's devices woken by alerts, but those whose flow is in `sparing`
    /// (they had a leg: the CANCEL told them).
    private func notify(_ notice: PushSender.CallNotice, call: HeldCall, sparing: [String]) {
        for binding in registrar.activeBindings(aor: call.aor) where !sparing.contains(binding.flow?.key ?? "") {
            pushCall(notice, invite: call.invite, aor: call.aor, binding: binding)
        }
    }

    /// Routes an ACK: one for the server's own non-2xx answer ends its retransmissions; one for a 2xx goes on to
    /// the device like any request of the dialog.
    func handleAck(_ request: SIPRequest, flow: ServerFlow) {
        guard let callID = request.headers.callID, let call = calls[callID] else { return }
        if request.headers.topVia?.branch == call.callerBranch {
            call.finalRetransmission?.stop()
            return
        }
        relay(request, from: flow, call: call, transactionKey: nil)
    }

    // MARK: - the dialog

    /// True when `request` belongs to a call's dialog the server relays (it carries a To tag and a known Call-ID).
    func isInDialog(_ request: SIPRequest) -> Bool {
        guard request.headers.to?.tag != nil, let callID = request.headers.callID else { return false }
        return calls[callID] != nil
    }

    /// Relays a request of an answered call's dialog (BYE, re-INVITE, INFO, UPDATE…) to the other side.
    func handleInDialog(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard let callID = request.headers.callID, let call = calls[callID] else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 481)
            return
        }
        relay(request, from: flow, call: call, transactionKey: transactionKey)
    }

    /// Passes a dialog request to the other side over its flow; a request other than ACK is awaited as a client
    /// transaction (retransmitted over UDP; 408 to its sender at Timer F).
    private func relay(_ request: SIPRequest, from flow: ServerFlow, call: HeldCall, transactionKey: String?) {
        let method = request.method.uppercased()
        guard let leg = call.answeredLeg else {
            if let transactionKey { respond(request, flow: flow, transactionKey: transactionKey, status: 481) }
            return
        }
        let fromCaller = request.headers.from?.tag == call.callerTag
        let target = fromCaller ? leg.flow : call.callerFlow
        guard target.isLive else {
            if let transactionKey { respond(request, flow: flow, transactionKey: transactionKey, status: 480) }
            return
        }
        let branch = SIPIdentifiers.branch()
        let addresses = listeners.addresses
        let relayed = CallMessages.relayed(request, over: target, branch: branch) { uri in
            let port = uri.port ?? 5060
            return addresses.contains { $0.port == port && $0.host == uri.host }
        }
        let bytes = relayed.serialized()
        target.send(bytes)
        logger.debug(
            "sip server relayed a dialog request",
            metadata: ["sip.call_id": "\(call.callID)", "sip.method": "\(method)", "sip.from_caller": "\(fromCaller)"])
        guard let transactionKey, method != "ACK" else { return }
        let stop = StopSignal()
        calls.addRelay(
            branch: branch,
            CallTable.Relay(
                callID: call.callID, method: method, returnFlow: flow, transactionKey: transactionKey,
                retransmission: stop))
        let timers = configuration.timers
        spawn { [weak self] in
            let end = await stop.run { () async -> SIPRetransmissions.End? in
                await SIPRetransmissions.run(timers: timers, reliable: target.kind != .udp) {
                    guard target.isLive else { return nil }
                    target.send(bytes)
                    return false
                }
            }
            guard end != nil else { return }
            await self?.relayFailed(branch: branch, request: request)
        }
    }

    /// A relayed request got no answer (Timer F) or its target went away: its sender hears 408.
    private func relayFailed(branch: String, request: SIPRequest) {
        guard let relay = calls.removeRelay(branch: branch) else { return }
        respond(request, flow: relay.returnFlow, transactionKey: relay.transactionKey, status: 408)
    }

    // MARK: - answers from devices

    /// Takes a response that belongs to the call path (a device leg's INVITE or CANCEL, a relayed request);
    /// false when it is someone else's (the MESSAGE forwarder's).
    func handleCallResponse(_ response: SIPResponse, branch: String?) -> Bool {
        guard let branch else { return false }
        if let relay = calls.relay(branch: branch) {
            relayResponse(response, branch: branch, relay: relay)
            return true
        }
        guard let callID = calls.callID(forLeg: branch) else { return false }
        let method = response.headers.cseq?.method.uppercased() ?? "INVITE"
        guard method == "INVITE" else { return true }  // a CANCEL's 200, a late BYE's answer: nothing to do
        guard var call = calls[callID], let index = call.legIndex(branch) else { return true }
        var leg = call.legs[index]
        leg.retransmission.stop()
        let status = response.statusCode
        if status < 200 {
            leg.proceeding = true
            if leg.cancelOwed {
                // The provisional answer a CANCEL waits for (RFC 3261 §9.1).
                leg.flow.send(CallMessages.cancel(of: leg.invite, reason: leg.cancelReason).serialized())
                leg.cancelOwed = false
            }
            call.legs[index] = leg
            calls[callID] = call
            guard status != 100, case .forking = call.phase, leg.isOpen else { return true }
            let bytes = CallMessages.withoutTopVia(response).serialized()
            serverTransactions.store(response: bytes, for: call.transactionKey)
            call.callerFlow.send(bytes)
            if status == 180 || status == 183, call.step != .ringing { note(call, .ringing, status: status) }
            return true
        }
        let firstFinal = leg.isOpen
        leg.final = status
        call.legs[index] = leg
        if (200..<300).contains(status) {
            answered(&call, leg: leg, response: response, firstFinal: firstFinal)
        } else {
            // Every final non-2xx is acknowledged hop by hop, a retransmitted one too.
            leg.flow.send(CallMessages.ack(of: leg.invite, answer: response).serialized())
            if firstFinal { declined(&call, leg: leg, response: response) }
        }
        if case .cancelling = call.phase, !call.hasOpenLeg { call.finish() }
        // What `note` and `answerCaller` recorded in the table meanwhile stays.
        if let recorded = calls[callID] {
            call.step = recorded.step
            call.finalRetransmission = recorded.finalRetransmission
        }
        calls[callID] = call
        return true
    }

    /// A device answered 2xx: the first one while the caller waits wins (the other legs are cancelled, the other
    /// devices woken by alerts get "Accepted elsewhere"); the winner's retransmissions are passed on; any other 2xx
    /// sets up a dialog nobody wants, which is acknowledged and hung up at once.
    private func answered(_ call: inout HeldCall, leg: HeldCall.DeviceLeg, response: SIPResponse, firstFinal: Bool) {
        switch call.phase {
        case .forking:
            call.forkTimer.stop()
            call.phase = .answered(branch: leg.branch)
            cancelOpenLegs(of: &call, except: leg.branch, reason: "SIP;cause=200;text=\"Call completed elsewhere\"")
            calls[call.callID] = call
            call.callerFlow.send(CallMessages.withoutTopVia(response).serialized())
            note(call, .answered, status: response.statusCode)
            logger.info(
                "sip server call answered",
                metadata: ["sip.call_id": "\(call.callID)", "sip.legs": "\(call.legs.count)"])
            notify(.answeredElsewhere, call: call, sparing: [leg.flow.key])
        case .answered(let branch) where branch == leg.branch:
            // The device retransmits its 2xx until the caller's ACK arrives: pass each on.
            call.callerFlow.send(CallMessages.withoutTopVia(response).serialized())
        default:
            let sequence = leg.invite.headers.cseq?.sequence ?? 1
            leg.flow.send(
                CallMessages.dialogRequest("ACK", of: leg.invite, answer: response, over: leg.flow, sequence: sequence)
                    .serialized())
            if firstFinal {
                leg.flow.send(
                    CallMessages.dialogRequest(
                        "BYE", of: leg.invite, answer: response, over: leg.flow, sequence: sequence &+ 1
                    ).serialized())
            }
        }
    }

    /// A device answered non-2xx (first time): while the caller waits, a 6xx ends the call everywhere (the other
    /// devices woken by alerts get "Declined elsewhere"); any other answer waits for the open legs, and once none
    /// is left the caller hears the best answer (RFC 3261 §16.7 step 6).
    private func declined(_ call: inout HeldCall, leg: HeldCall.DeviceLeg, response: SIPResponse) {
        guard case .forking = call.phase else { return }
        if HeldCall.isBetter(response, than: call.best) { call.best = response }
        let status = response.statusCode
        guard status >= 600 || !call.hasOpenLeg else { return }
        settleWithBest(&call)
        if status >= 600 { notify(.declinedElsewhere, call: call, sparing: [leg.flow.key]) }
    }

    /// Ends a forking call with the best non-2xx answer its devices gave: open legs cancelled, the caller told.
    private func settleWithBest(_ call: inout HeldCall) {
        guard let best = call.best else { return }
        call.forkTimer.stop()
        let declinedEverywhere = best.statusCode >= 600
        cancelOpenLegs(
            of: &call, except: nil,
            reason: declinedEverywhere
                ? "SIP;cause=\(best.statusCode);text=\"\(SIPResponse.defaultReason(best.statusCode))\"" : nil)
        if call.hasOpenLeg { call.phase = .cancelling } else { call.finish() }
        calls[call.callID] = call
        answerCaller(call.callID, with: CallMessages.withoutTopVia(best))
        note(call, .declined, status: best.statusCode)
        logger.info(
            "sip server call declined by the devices",
            metadata: ["sip.call_id": "\(call.callID)", "sip.status": "\(best.statusCode)"])
        if call.hasOpenLeg { giveUpCancellingLater(call.callID) }
        // What `note` and `answerCaller` recorded in the table stays in the copy the caller writes back.
        if let recorded = calls[call.callID] {
            call.step = recorded.step
            call.finalRetransmission = recorded.finalRetransmission
        }
    }

    private func relayResponse(_ response: SIPResponse, branch: String, relay: CallTable.Relay) {
        let bytes = CallMessages.withoutTopVia(response).serialized()
        relay.returnFlow.send(bytes)
        guard response.statusCode >= 200 else { return }
        relay.retransmission.stop()
        _ = calls.removeRelay(branch: branch)
        serverTransactions.store(response: bytes, for: relay.transactionKey)
        guard relay.method == "BYE", var call = calls[relay.callID], case .answered = call.phase else { return }
        call.finish()
        calls[relay.callID] = call
        note(call, .hungUp, status: response.statusCode)
        logger.info("sip server call hung up", metadata: ["sip.call_id": "\(relay.callID)"])
    }

    // MARK: - helpers

    /// Sends a final answer to the caller's INVITE, stores it for retransmitted INVITEs, and for a non-2xx over
    /// UDP retransmits it until the caller's ACK (Timers G and H, RFC 3261 §17.2.1).
    private func answerCaller(_ callID: String, with response: SIPResponse) {
        guard var call = calls[callID] else { return }
        let bytes = response.serialized()
        serverTransactions.store(response: bytes, for: call.transactionKey)
        call.callerFlow.send(bytes)
        emit(.answered(method: "INVITE", callID: callID, status: response.statusCode))
        guard call.callerFlow.kind == .udp, response.statusCode >= 300 else { return }
        let (stop, flow, timers) = (StopSignal(), call.callerFlow, configuration.timers)
        call.finalRetransmission = stop
        calls[callID] = call
        spawn {
            _ = await stop.run { () async -> SIPRetransmissions.End? in
                await SIPRetransmissions.run(timers: timers, reliable: false) {
                    guard flow.isLive else { return nil }
                    flow.send(bytes)
                    return false
                }
            }
        }
    }

    private func pushCall(
        _ notice: PushSender.CallNotice, invite: SIPRequest, aor: String, binding: Registrar.Binding,
        sealedOffer: String? = nil
    ) {
        guard let push = binding.push,
            let plan = pushSender.planCall(
                notice, aor: aor, invite: invite, push: push, instance: binding.instance, sealedOffer: sealedOffer)
        else { return }
        if case .send(let job) = plan, case .incoming = notice, let recording = configuration.recording {
            do { try recording.recordCall(job, invite: invite, transport: binding.route.transport.rawValue) } catch {
                logger.error(
                    "sip server push not recorded as a case",
                    metadata: ["sip.call_id": "\(job.callID)", "recording.error": "\(error)"])
            }
        }
        sendPush(plan)
    }

    /// Records a call's step and reports it.
    private func note(_ call: HeldCall, _ step: CallStep, status: Int? = nil) {
        calls[call.callID]?.step = step
        emit(.call(aor: call.aor, callID: call.callID, step: step, status: status))
    }
}

extension SIPServer {
    /// An INVITE client transaction's timers (RFC 3261 §17.1.1): Timer A retransmissions over UDP until `stop` (the
    /// answer came) or Timer B; `unanswered` runs at Timer B, or when the flow closed first.
    func retransmitInvite(
        _ bytes: [UInt8], over flow: ServerFlow, until stop: StopSignal,
        unanswered: @escaping @Sendable (SIPServer) async -> Void
    ) {
        let timers = configuration.timers
        spawn { [weak self] in
            let end = await stop.run { () async -> SIPRetransmissions.End? in
                await SIPRetransmissions.run(timers: timers, reliable: flow.kind != .udp) {
                    guard flow.isLive else { return nil }
                    flow.send(bytes)
                    return false
                }
            }
            guard let end, end == .timedOut || !flow.isLive, let self else { return }
            await unanswered(self)
        }
    }
}
