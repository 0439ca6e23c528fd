public import Logging
import NSEAppRegistration
public import NSEDevice
import NSESIP

/// Runs a ``CalleeMachine`` for real: the app's own SIP user agent (registered as the app registers, with its push
/// parameters, answering INVITEs), one timer task per running timer, and one merged stream of events the machine
/// takes in order. No polling: the loop waits for the next event.
public struct CalleeDriver: Sendable {
    /// How the call ended.
    public struct Outcome: Sendable, Equatable {
        public var endReason: CallEndReason
        /// The SIP status that ended it on this end: sent (603, 486, 480), answered to the caller's BYE (200) or
        /// CANCEL (487), or the BYE's; nil when none.
        public var sipStatus: Int?
        /// Whether the INVITE offered video.
        public var video: Bool?
        /// The REGISTER's final status, if one came.
        public var registrationStatus: Int?
    }

    /// What the loop takes in: the machine's events, and the call they are about once it is offered.
    private enum Input: Sendable {
        case event(CalleeMachine.Event)
        case offered(SIPCall)
    }

    public let device: Device
    public let account: SIPAccount
    public let password: String?
    /// The Call-ID of the INVITE the push announced.
    public let callID: String
    public let plan: CallSettings
    public let logger: Logger

    public init(
        device: Device, account: SIPAccount, password: String?, callID: String, plan: CallSettings, logger: Logger
    ) {
        self.device = device
        self.account = account
        self.password = password
        self.callID = callID
        self.plan = plan
        self.logger = logger
    }

    /// Runs the call to its end; `step` is told each step of the timeline as it happens. Anything on `terminate`
    /// (SIGTERM to the app's process) ends the call now.
    public func run(
        terminate: AsyncStream<Void> = AsyncStream { $0.finish() }, step: @Sendable (CalleeMachine.Step) -> Void
    ) async -> Outcome {
        var configuration = AppRegistration.configuration(for: account)
        configuration.acceptsCalls = true
        configuration.userAgent = "nse-app/1"
        let agent = SIPUserAgent(configuration: configuration, logger: logger)
        let (inputs, input) = AsyncStream<Input>.makeStream()
        var machine = CalleeMachine(plan: plan)
        var outcome = Outcome(endReason: .failed)
        var timers: [CalleeMachine.Timer: Task<Void, Never>] = [:]
        var call: SIPCall? = nil
        let registration: SIPRegistration?
        do { registration = try AppRegistration.registration(for: device, account: account, password: password) } catch
        {
            logger.warning("app registration not possible", metadata: ["sip.error": "\(error)"])
            registration = nil
        }
        let expected = callID
        let listener = Task {
            for await offered in agent.incomingCalls {
                guard offered.callID == expected else {
                    // The app handles the call it was woken for; another one hears busy.
                    await offered.reject(statusCode: 486)
                    continue
                }
                input.yield(.offered(offered))
            }
        }
        var forwarder: Task<Void, Never>? = nil
        let terminator = Task {
            for await _ in terminate {
                input.yield(.event(.terminated))
                return
            }
        }

        func perform(_ actions: [CalleeMachine.Action]) async -> Bool {
            for action in actions {
                switch action {
                case .register:
                    guard let registration else {
                        input.yield(.event(.registrationFailed))
                        continue
                    }
                    Task {
                        do {
                            let result = try await agent.register(registration)
                            input.yield(.event(.registered(statusCode: result.statusCode)))
                        } catch {
                            input.yield(.event(.registrationFailed))
                        }
                    }
                case .ring:
                    await call?.ring()
                case .answer:
                    if let call {
                        let offer = CallOffer.sdp(in: call.invite.body, contentType: call.invite.headers.contentType)
                        let answer = SessionDescription(answering: offer, from: call.invite.uri.host)
                        await call.answer(body: answer.bytes)
                    }
                case .reject(let status):
                    await call?.reject(statusCode: status)
                case .hangUp:
                    await call?.hangUp()
                case .start(let timer, let seconds):
                    timers[timer]?.cancel()
                    timers[timer] = Task {
                        do { try await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000))) } catch { return }
                        input.yield(.event(.timer(timer)))
                    }
                case .stop(let timer):
                    timers.removeValue(forKey: timer)?.cancel()
                case .record(let recorded):
                    step(recorded)
                case .finish(let reason, let status):
                    outcome.endReason = reason
                    outcome.sipStatus = status
                    return false
                }
            }
            return true
        }

        var running = await perform(machine.start())
        if running {
            for await next in inputs {
                let event: CalleeMachine.Event
                switch next {
                case .offered(let offered):
                    guard call == nil else {
                        await offered.reject(statusCode: 486)
                        continue
                    }
                    call = offered
                    let offer = CallOffer.sdp(in: offered.invite.body, contentType: offered.invite.headers.contentType)
                    outcome.video = SessionDescription.offersVideo(offer)
                    forwarder = Task { for await happened in offered.events { input.yield(.event(.call(happened))) } }
                    event = .offered
                case .event(let happened):
                    if case .registered(let status) = happened { outcome.registrationStatus = status }
                    event = happened
                }
                running = await perform(machine.handle(event))
                if !running { break }
            }
        }
        for (_, timer) in timers { timer.cancel() }
        listener.cancel()
        terminator.cancel()
        forwarder?.cancel()
        input.finish()
        await agent.close()
        return outcome
    }
}
