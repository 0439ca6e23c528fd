import NSEDevice
import NSESIP
import NSESystem

/// What reaches the fetch's loop: the machine's events, and each new MESSAGE with the reply its sender waits for and
/// when the user agent handed it over (its arrival, for the flush's quiet window).
enum FetchInput: Sendable {
    case event(FetchMachine.Event)
    case offered(SIPReceivedMessage, CheckedContinuation<SIPMessageAnswer, Never>, at: UInt64)
}

/// Runs a `FetchMachine`: one loop over one merged stream of inputs, doing the I/O its actions ask for. The user
/// agent's answers, the timers and the host's expiry notice all arrive as inputs; nothing else is shared.
struct FetchDriver {
    /// The answer to a MESSAGE the store could not keep: the server keeps it for a later REGISTER.
    static let notStored = SIPMessageAnswer(statusCode: 500, reasonPhrase: "Message Not Stored")

    var machine: FetchMachine
    let agent: SIPUserAgent
    let registration: SIPRegistration
    let store: MessageStore?
    /// The account's address (the IMDN's sender) and the credentials for sending it.
    let aor: String
    let feed: AsyncStream<FetchInput>.Continuation
    let start: UInt64
    var report: FetchReport

    /// The awaited message, once here.
    private var found: ReceivedContent?
    /// The awaited message came but is another process's to show: who showed it (`.some(nil)`: being shown).
    private var shownElsewhere: MessageStore.Viewer??
    private var notice: (to: String, body: [UInt8])?
    private var offers: [Int: (message: SIPReceivedMessage, reply: CheckedContinuation<SIPMessageAnswer, Never>)] = [:]
    private var nextOfferID = 0
    private var timers: [Int: SIPArmedTimer] = [:]
    private var outcome: FetchOutcome?

    init(
        machine: FetchMachine, agent: SIPUserAgent, registration: SIPRegistration, store: MessageStore?, aor: String,
        feed: AsyncStream<FetchInput>.Continuation, start: UInt64, report: FetchReport
    ) {
        self.machine = machine
        self.agent = agent
        self.registration = registration
        self.store = store
        self.aor = aor
        self.feed = feed
        self.start = start
        self.report = report
    }

    /// The acceptor for the user agent: each new MESSAGE waits in the loop's stream for the machine's answer.
    static func acceptor(feeding feed: AsyncStream<FetchInput>.Continuation)
        -> @Sendable (SIPReceivedMessage) async -> SIPMessageAnswer
    {
        { message in
            let arrival = SystemClock.monotonicNanoseconds()
            return await withCheckedContinuation { reply in
                if case .terminated = feed.yield(.offered(message, reply, at: arrival)) {
                    reply.resume(returning: notStored)
                }
            }
        }
    }

    /// Runs until the machine finishes (the user agent closed); returns how the fetch ended, with what it found.
    mutating func run(_ inputs: AsyncStream<FetchInput>) async -> FetchEnd {
        perform(machine.start())
        for await input in inputs {
            switch input {
            case .event(let event):
                if case .registerAnswered(let status) = event, report.registerStatus == nil {
                    report.registerStatus = status
                    report.registerMilliseconds = SystemClock.millisecondsSince(start)
                }
                if case .noticeAnswered(let status) = event { report.imdnStatus = status }
                perform(machine.handle(event, at: SystemClock.monotonicNanoseconds()))
            case .offered(let message, let reply, let arrival):
                let id = nextOfferID
                nextOfferID += 1
                offers[id] = (message, reply)
                // Only the awaited one can need an IMDN; it is built once, here.
                var wantsNotice = false
                if message.callID == machine.target, found == nil {
                    notice = ReceivedContent(message).deliveryNotice(recipient: aor)
                    wantsNotice = notice != nil
                }
                // At its arrival: the wait the quiet window scales with is the network's and the user agent's, not
                // the time this loop took to build the notice.
                perform(
                    machine.handle(
                        .messageOffered(id: id, callID: message.callID, wantsNotice: wantsNotice), at: arrival))
            }
            if outcome != nil { break }
        }
        for (_, timer) in timers { timer.cancel() }
        // The user agent is closed: nothing can offer a message any more. Answer anything left, for good measure.
        feed.finish()
        for await input in inputs {
            if case .offered(_, let reply, _) = input { reply.resume(returning: Self.notStored) }
        }
        for (_, offer) in offers { offer.reply.resume(returning: Self.notStored) }
        report.registrations = machine.registrations
        return FetchEnd(
            outcome: outcome ?? .notFound, message: found, shownBy: shownElsewhere ?? nil, report: report, store: store,
            start: start)
    }

    private mutating func perform(_ actions: [FetchMachine.Action]) {
        var queue = actions[...]
        while let action = queue.popFirst() {
            switch action {
            case .register:
                let agent = agent
                let registration = registration
                let feed = feed
                Task {
                    do {
                        let result = try await agent.register(registration)
                        feed.yield(.event(.registerAnswered(status: result.statusCode)))
                    } catch {
                        feed.yield(.event(.registerFailed("\(error)")))
                    }
                }
            case .checkStore:
                let stored = takeFromStore()
                if shownElsewhere != nil {
                    queue += machine.handle(.targetShownElsewhere, at: SystemClock.monotonicNanoseconds())
                    continue
                }
                if let stored {
                    let content = ReceivedContent(stored)
                    found = content
                    report.fromStore = true
                    report.foundMilliseconds = SystemClock.millisecondsSince(start)
                    notice = content.deliveryNotice(recipient: aor)
                }
                queue += machine.handle(
                    .storeChecked(found: stored != nil, wantsNotice: stored != nil && notice != nil),
                    at: SystemClock.monotonicNanoseconds())
            case .answer(let id, let disposition):
                guard let offer = offers.removeValue(forKey: id) else { continue }
                let answer = self.answer(offer.message, as: disposition)
                if (200..<300).contains(answer.statusCode) { report.callIDsReceived.append(offer.message.callID) }
                offer.reply.resume(returning: answer)
                queue += machine.handle(.messageAnswered(id: id), at: SystemClock.monotonicNanoseconds())
                if disposition == .target, shownElsewhere != nil {
                    queue += machine.handle(.targetShownElsewhere, at: SystemClock.monotonicNanoseconds())
                }
            case .arm(let timer, let at):
                // On the user agent's event loop: no task, and no timer thread to wake, for timers mostly cancelled.
                timers[timer.slot]?.cancel()
                let feed = feed
                let delay = Int64(bitPattern: at &- SystemClock.monotonicNanoseconds())
                timers[timer.slot] = SIPArmedTimer.after(.nanoseconds(max(0, delay)), on: agent.eventLoop) {
                    feed.yield(.event(.timerFired(timer)))
                }
            case .sendNotice:
                guard let notice, let to = try? SIPURI(parsing: notice.to), let from = try? SIPURI(parsing: aor) else {
                    queue += machine.handle(.noticeAnswered(status: nil), at: SystemClock.monotonicNanoseconds())
                    continue
                }
                report.imdn = "delivered"
                let outgoing = SIPOutgoingMessage(
                    to: to, from: from, proxy: registration.proxy, contentType: "message/cpim", body: notice.body,
                    password: registration.password)
                let agent = agent
                let feed = feed
                Task {
                    let status = try? await agent.sendMessage(outgoing).statusCode
                    feed.yield(.event(.noticeAnswered(status: status)))
                }
            case .close:
                report.leftMilliseconds = SystemClock.millisecondsSince(start)
                report.quietMilliseconds = Double(machine.quiet) / 1e6
                let agent = agent
                let feed = feed
                Task {
                    await agent.close()
                    feed.yield(.event(.agentClosed))
                }
            case .finish(let result):
                outcome = result
            }
        }
    }

    /// The answer to a MESSAGE, decided before it is sent. The awaited one is accepted (this process shows it) and
    /// kept as well until it is shown: an extension killed between the 200 and the content handler leaves it held for
    /// the next push. That copy guards against this process dying, so it is written crash-safe, not synced: the 200
    /// does not wait for the disk. If the store cannot keep it, this process still shows it. Any other is accepted
    /// only once the App Group store has it on disk, else refused with 500 so the server keeps it.
    private mutating func answer(_ message: SIPReceivedMessage, as disposition: FetchMachine.Disposition)
        -> SIPMessageAnswer
    {
        let received = ReceivedContent(message)
        switch disposition {
        case .target:
            report.foundMilliseconds = SystemClock.millisecondsSince(start)
            found = received
            guard let store else { return .accepted }
            do {
                switch try store.claimArrived(StoredMessage(received)) {
                case .claimed, .absent: break
                case .claimedElsewhere: shownElsewhere = .some(nil)
                case .shown(let viewer): shownElsewhere = viewer
                }
            } catch {
                // Not kept: this process shows it all the same.
                report.storeError = report.storeError ?? error.description
            }
            if shownElsewhere != nil { found = nil }
            return .accepted
        case .other:
            guard let store else { return Self.notStored }
            do {
                if try store.keep(StoredMessage(received)) == .kept { report.stored += 1 }
                return .accepted
            } catch {
                report.storeError = report.storeError ?? error.description
                return Self.notStored
            }
        }
    }

    /// The awaited message, if another process kept it since the fetch began; notes when another shows it.
    private mutating func takeFromStore() -> StoredMessage? {
        do {
            switch try store?.claim(callID: machine.target) {
            case .claimed(let message)?: return message
            case .claimedElsewhere?: shownElsewhere = .some(nil)
            case .shown(let viewer)?: shownElsewhere = viewer
            case .absent?, nil: break
            }
        } catch {
            report.storeError = report.storeError ?? error.description
        }
        return nil
    }
}
