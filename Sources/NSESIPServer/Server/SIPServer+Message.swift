import Logging
import NSECrypto
import NSEHTTP
import NSESIP
import NSESystem

/// The MESSAGE path: a sender's MESSAGE is forwarded to the live bindings and/or held (`Forwarder`), its sender
/// answered once (`PendingSenders`), held messages pushed for (`PushSender`).
extension SIPServer {
    /// Held messages not yet delivered (Call-IDs, oldest first), optionally for one AOR (`sip:user@host`).
    public func undeliveredCallIDs(aor: String? = nil) -> [String] {
        forwarder.held.waiting(aor: aor.map { SIPServer.aorKey($0) }).map(\.callID)
    }

    func handleMessage(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        let aor = SIPServer.aorKey(request.uri)
        let log = logger.adding([
            "sip.call_id": "\(request.headers.callID ?? "")",
            "sip.method": "MESSAGE",
            "sip.aor": "\(aor)",
        ])
        let active = registrar.activeBindings(aor: aor)
        guard !active.isEmpty else {
            let known = registrar.isKnown(aor: aor, user: request.uri.user)
            log.debug("sip server message for unreachable aor", metadata: ["sip.known": "\(known)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: known ? 480 : 404)
            return
        }
        let id: String
        do { id = try SecureRandom.hex(16) } catch {
            log.error("sip server has no secure randomness for a held message id", metadata: ["sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 500)
            return
        }
        // For the devices registered now, each delivered apart (as Flexisip's fork context: one branch per device).
        let record = HeldMessage(
            request: request, id: id, aor: aor, devices: active.map(\.key), now: SystemClock.unixSeconds(),
            lifetime: configuration.heldMessageLifetime, order: forwarder.nextOrder())
        // Held when a device may be woken by a push, when none is reachable now, or when there are several (each
        // must get it, and the sender hears one answer); otherwise only forwarded.
        let mustHold = active.count > 1 || active.contains { $0.push != nil } || !active.contains { $0.isLive }
        if mustHold {
            do { try hold(record) } catch {
                log.error("sip server cannot persist held message", metadata: ["sip.error": "\(error)"])
                respond(request, flow: flow, transactionKey: transactionKey, status: 500, reason: "Message Not Stored")
                return
            }
        }
        let senderKey = transactionKey
        let timer = StopSignal()
        senders.add(
            PendingSenders.Sender(
                request: request, flow: flow, transactionKey: transactionKey, record: record,
                custody: mustHold ? .held : .forwarded, outstanding: 0, timer: timer),
            key: senderKey)
        let timeout = configuration.messageAcceptTimeout
        spawn { [weak self] in
            let fired = await timer.run { () async -> Bool? in
                do { try await Task.sleep(for: timeout) } catch { return nil }
                return true
            }
            if fired != nil { await self?.acceptTimeoutFired(senderKey) }
        }
        for binding in active {
            guard let liveFlow = binding.flow, liveFlow.isLive else { continue }
            senders.copySent(senderKey)
            transmit(
                forwarder.send(
                    record, over: liveFlow, to: binding.contact.uri,
                    carrying: .init(heldID: mustHold ? record.id : nil, senderKey: senderKey, device: binding.key),
                    copies: 1))
        }
        guard mustHold else { return }
        if APNsMessagePush.isIMDN(contentType: request.headers.contentType, body: request.body) {
            log.debug("sip server not pushing an IMDN")
            return
        }
        // One push per device token and topic: a token on several bindings (the app registered again under another
        // instance, as after a reinstall) would wake two extensions for one message.
        var pushed = Set<String>()
        for binding in active {
            guard let push = binding.push,
                let plan = pushSender.plan(record: record, request: request, push: push, instance: binding.instance)
            else { continue }
            if case .send(let job) = plan, !pushed.insert(job.destination).inserted {
                log.debug("sip server not pushing one token twice", metadata: ["sip.call_id": "\(record.callID)"])
                continue
            }
            if case .send(let job) = plan, let recording = configuration.recording {
                recordCase(job, recording: recording, transport: binding.route.transport, device: binding.key)
            }
            sendPush(plan)
        }
    }

    /// Writes the replay case of a push about to go: what the address holds now for the device pushed, bodies as
    /// held.
    private func recordCase(
        _ job: PushSender.Job, recording: ServerCaseRecording, transport: SIPTransportKind, device: String
    ) {
        let held = forwarder.held.waiting(aor: job.aor, device: device)
        do { try recording.record(job, held: held, transport: transport.rawValue) } catch {
            logger.error(
                "sip server push not recorded as a case",
                metadata: ["sip.call_id": "\(job.callID)", "recording.error": "\(error)"])
        }
    }

    /// Stores a message for later delivery; it counts as held (and its sender may hear 202) only once stored.
    private func hold(_ record: HeldMessage) throws(SIPServerError) {
        try forwarder.hold(record)
        registrar.noteKnown(record.aor)
        emit(.held(aor: record.aor, callID: record.callID, id: record.id, devices: record.recipients.map(\.device)))
        logger.info(
            "sip server message held",
            metadata: [
                "sip.call_id": "\(record.callID)", "sip.method": "MESSAGE", "sip.aor": "\(record.aor)",
                "sip.body_size": "\(record.body.count)", "sip.devices": "\(record.recipients.count)",
            ])
    }

    /// No device took the message in time: a forwarded one is held for the next REGISTER (fork-late); the sender
    /// hears 202 either way.
    private func acceptTimeoutFired(_ senderKey: String) {
        guard let sender = senders[senderKey] else { return }
        if sender.custody == .forwarded {
            do { try hold(sender.record) } catch {
                logger.error("sip server cannot persist held message", metadata: ["sip.error": "\(error)"])
                answerSender(senderKey, status: 500, reason: "Message Not Stored")
                return
            }
            senders.markHeld(senderKey)
            forwarder.adopt(senderKey: senderKey, heldID: sender.record.id)
        }
        answerSender(senderKey, status: 202)
    }

    private func answerSender(_ senderKey: String, status: Int, reason: String? = nil) {
        guard let sender = senders.take(senderKey) else { return }
        respond(
            sender.request, flow: sender.flow, transactionKey: sender.transactionKey, status: status, reason: reason)
    }

    /// Reports a copy sent and runs its timers: retransmissions as a child task (UDP), or Timer F armed on its
    /// connection's event loop (TCP/TLS).
    func transmit(_ sent: Forwarder.Sent) {
        for event in sent.events { emit(event) }
        switch sent.timing {
        case .retransmitting(let transmission):
            spawn { [weak self] in
                guard let status = await transmission.run() else { return }
                await self?.transmissionEnded(branch: transmission.branch, status: status)
            }
        case .timerF(let branch):
            // Fires on the event loop: the 408 goes to the actor as a job of the tree (dropped once it is finished).
            let tree = self.tree
            forwarder.armTimerF(branch: branch) { [weak self] in
                tree.spawn { [weak self] in await self?.transmissionEnded(branch: branch, status: 408) }
            }
        }
    }

    private func transmissionEnded(branch: String, status: Int) {
        if let outcome = forwarder.finish(branch: branch, status: status) { record(outcome) }
    }

    /// A delivery's outcome for the senders: a held message's sender hears 200 once a device has it (the first
    /// of its devices); a forwarded copy's sender hears its 2xx, or the failure once every copy failed and nothing
    /// is held.
    func record(_ outcome: Forwarder.Outcome) {
        if let message = outcome.delivered {
            let device = message.recipients.isEmpty ? nil : outcome.carrying.device
            let remaining = message.pendingDevices.count
            emit(
                .delivered(
                    aor: message.aor, callID: message.callID, id: message.id, device: device, remaining: remaining))
            logger.info(
                "sip server message delivered to a device",
                metadata: [
                    "sip.call_id": "\(message.callID)", "sip.method": "MESSAGE", "sip.aor": "\(message.aor)",
                    "sip.device": "\(device.map(HeldMessage.Recipient.loggable) ?? "any")",
                    "sip.remaining": "\(remaining)",
                ])
            if let senderKey = senders.key(forHeld: message.id) { answerSender(senderKey, status: 200) }
        }
        guard let senderKey = outcome.carrying.senderKey else { return }
        if outcome.succeeded {
            answerSender(senderKey, status: outcome.status)
        } else if let status = senders.copyFailed(senderKey, status: outcome.status) {
            answerSender(senderKey, status: status)
        }
    }

    // MARK: - pushes

    /// Reports a push that cannot go, or sends it as a child task and reports how it went.
    func sendPush(_ plan: PushSender.Plan) {
        switch plan {
        case .skipped(let outcome):
            emit(
                .pushed(
                    aor: outcome.aor, callID: outcome.callID, url: outcome.url, status: outcome.status,
                    reason: outcome.reason))
        case .send(let job):
            spawn { [weak self] in
                let outcome = await job.run()
                await self?.pushFinished(outcome)
            }
        }
    }

    private func pushFinished(_ outcome: PushSender.Outcome) {
        let (aor, callID, status, reason) = (outcome.aor, outcome.callID, outcome.status, outcome.reason)
        emit(.pushed(aor: aor, callID: callID, url: outcome.url, status: status, reason: reason))
        let level: Logger.Level = status.map { (200..<300).contains($0) } == true ? .info : .warning
        logger.log(
            level: level, "sip server push sent",
            metadata: [
                "sip.call_id": "\(callID)", "sip.aor": "\(aor)", "push.status": "\(status.map(String.init) ?? "none")",
                "push.reason": "\(reason)",
            ])
    }
}
