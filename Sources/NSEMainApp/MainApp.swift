import Dispatch
public import Logging
import NSEAppRegistration
public import NSEDevice
import NSEExtension
public import NSEJSON
import NSEPayload
import NSESIP
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The emulated main app in the foreground (`nse app DIR`): it takes the shared core from any running extension,
/// registers its SIP account and shows the messages that come to it itself, until SIGTERM or the end of `--for`
/// sends it to the background. One JSON line per event on `output` (docs/app.md); the messages it shows are the
/// only content in them, as the app's own screen shows it.
///
/// ``MainAppMachine`` decides; this type does the I/O over one merged stream of inputs: the shared core's answers,
/// the user agent's, the signals (SIGTERM: go to the background; SIGUSR1: an extension stopped its core), timers and
/// each MESSAGE with the answer its sender waits for.
public struct MainApp {
    public let device: Device
    /// Seconds in the foreground before going to the background on its own (nil: until SIGTERM).
    public var stayFor: Double?
    public let logger: Logger

    public init(device: Device, stayFor: Double?, logger: Logger) {
        self.device = device
        self.stayFor = stayFor
        self.logger = logger
    }

    /// How `run` ended, as the command's exit status says it.
    public enum Ending: Sendable, Equatable {
        /// In the background: the core stopped, the binding (with push parameters) left on the server.
        case background
        /// Another app process holds the main core (`nse app` is already running for this device).
        case coreHeld(by: Int32)
        /// The device cannot be used (no SIP account, an unreadable store or password): the message says why.
        case unusable(String)
        /// The registrar refused or never answered.
        case registerFailed(String)
    }

    private enum Input: Sendable {
        case event(MainAppMachine.Event)
        /// SIGUSR1: an extension asked to stop has stopped (or the signal came for nothing).
        case extensionWoke
        case offered(SIPReceivedMessage, CheckedContinuation<SIPMessageAnswer, Never>)
    }

    /// Runs the app until it is in the background; `output` gets each event line.
    public func run(output: @escaping @Sendable (JSON) -> Void) async -> Ending {
        guard let account = device.config.sip else {
            return .unusable("\(device.directory) has no SIP account; add one with `nse device set --sip-account URI`")
        }
        let core: SharedCore
        let store: MessageStore
        let registration: SIPRegistration
        do {
            // One connection to the App Group store for the whole process.
            let group = try device.appGroup()
            core = group.sharedCore(watchdogSeconds: device.config.sharedCoreWatchdog)
            store = group.messages
            registration = try AppRegistration.registration(
                for: device, account: account, password: try device.sipPassword())
        } catch {
            return .unusable("\(error)")
        }

        let (inputs, feed) = AsyncStream<Input>.makeStream()
        var configuration = AppRegistration.configuration(for: account)
        configuration.userAgent = "nse-app/1"
        configuration.messageAcceptor = { message in
            await withCheckedContinuation { reply in
                if case .terminated = feed.yield(.offered(message, reply)) {
                    reply.resume(returning: SIPMessageAnswer(statusCode: 480))
                }
            }
        }
        let agent = SIPUserAgent(configuration: configuration, logger: logger)

        // SIGTERM sends the app to the background; SIGUSR1 is an extension saying it stopped its core.
        signal(SIGTERM, SIG_IGN)
        signal(SIGUSR1, SIG_IGN)
        let terminate = DispatchSource.makeSignalSource(signal: SIGTERM)
        terminate.setEventHandler { feed.yield(.event(.backgroundAsked(at: SystemClock.monotonicNanoseconds()))) }
        terminate.resume()
        let woken = DispatchSource.makeSignalSource(signal: SIGUSR1)
        woken.setEventHandler { feed.yield(.extensionWoke) }
        woken.resume()
        defer {
            terminate.cancel()
            woken.cancel()
        }
        var timers: [MainAppMachine.Timer: Task<Void, Never>] = [:]
        let stay: Task<Void, Never>? = stayFor.map { seconds in
            Task {
                do { try await Task.sleep(for: .milliseconds(Int64(seconds * 1000))) } catch { return }
                feed.yield(.event(.backgroundAsked(at: SystemClock.monotonicNanoseconds())))
            }
        }

        var machine = MainAppMachine(watchdogSeconds: device.config.sharedCoreWatchdog, expires: registration.expires)
        let start = SystemClock.monotonicNanoseconds()
        var stopped: [Int32] = []
        var lastRegisterStatus: Int?
        var ending: Ending?
        do {
            feed.yield(.event(.foreground(try core.comeToForeground(), at: SystemClock.monotonicNanoseconds())))
        } catch {
            ending = .unusable("\(error)")
        }

        func perform(_ actions: [MainAppMachine.Action]) {
            for action in actions {
                switch action {
                case .askToStop(let pids):
                    stopped = pids
                    for pid in pids { kill(pid, SIGUSR1) }
                case .takeCore(let forced):
                    do { try core.takeMainCore() } catch {
                        logger.warning("shared core not recorded", metadata: ["store.error": "\(error)"])
                    }
                    var line: JSONObject = [
                        "event": "foreground", "shared_core": .string(SharedCore.State.mainStarted.rawValue),
                        "waited_ms": .double(Self.rounded(SystemClock.millisecondsSince(start))),
                    ]
                    if !stopped.isEmpty {
                        line["stopped_extensions"] = .int(Int64(stopped.count))
                        line["forced"] = .bool(forced)
                    }
                    output(.object(line))
                    showHeld(store: store, recipient: account.aor, output: output)
                case .register:
                    let feed = feed
                    Task {
                        do {
                            let result = try await agent.register(registration)
                            feed.yield(
                                .event(
                                    .registerAnswered(
                                        status: result.statusCode, expires: result.expires,
                                        at: SystemClock.monotonicNanoseconds())))
                        } catch {
                            feed.yield(
                                .event(
                                    .registerAnswered(status: nil, expires: nil, at: SystemClock.monotonicNanoseconds())
                                ))
                        }
                    }
                case .arm(let timer, let at):
                    timers[timer]?.cancel()
                    timers[timer] = Task {
                        do { try await SystemClock.sleep(until: at) } catch { return }
                        feed.yield(.event(.timerFired(timer, at: SystemClock.monotonicNanoseconds())))
                    }
                case .heartbeat:
                    do { try core.heartbeat() } catch {
                        logger.warning("shared core heartbeat not recorded", metadata: ["store.error": "\(error)"])
                    }
                case .releaseCore:
                    do { try core.leaveForeground() } catch {
                        logger.warning("shared core not released", metadata: ["store.error": "\(error)"])
                    }
                case .finish(let exit):
                    switch exit {
                    case .background: ending = .background
                    case .coreHeld(let pid): ending = .coreHeld(by: pid)
                    case .registerFailed(let reason): ending = .registerFailed(reason)
                    }
                }
            }
        }

        if ending == nil {
            for await input in inputs {
                switch input {
                case .event(let event):
                    if case .registerAnswered(let status, let expires, _) = event {
                        let first = machine.phase == .registering
                        lastRegisterStatus = status
                        if first, let status, (200..<300).contains(status) {
                            output(["event": "registered", "status": .int(Int64(status)), "expires": JSON.int(expires)])
                        }
                    }
                    perform(machine.handle(event))
                case .extensionWoke:
                    guard case .waitingForExtensions = machine.phase else { continue }
                    let remaining = (try? core.stoppingExecutors().count) ?? 0
                    perform(
                        machine.handle(
                            .extensionsStopping(remaining: remaining, at: SystemClock.monotonicNanoseconds())))
                case .offered(let message, let reply):
                    guard machine.receivesMessages else {
                        // Not the app's yet (or any more): the server keeps it and pushes it.
                        reply.resume(returning: SIPMessageAnswer(statusCode: 480))
                        continue
                    }
                    reply.resume(returning: show(message, store: store, account: account, agent: agent, output: output))
                }
                if ending != nil { break }
            }
        }
        for (_, timer) in timers { timer.cancel() }
        stay?.cancel()
        feed.finish()
        await agent.close()
        for await input in inputs {
            if case .offered(_, let reply) = input { reply.resume(returning: SIPMessageAnswer(statusCode: 480)) }
        }
        if ending == .background {
            output(["event": "background", "register_status": JSON.int(lastRegisterStatus)])
        }
        return ending ?? .background
    }

    /// A MESSAGE that came to the app in the foreground: shown in the app, unless a notification already showed it;
    /// 200 once the App Group store records who showed it, else 500 (the server keeps it for a later push).
    private func show(
        _ message: SIPReceivedMessage, store: MessageStore, account: SIPAccount, agent: SIPUserAgent,
        output: @escaping @Sendable (JSON) -> Void
    ) -> SIPMessageAnswer {
        let opened = InAppMessage(message, device: device, recipient: account.aor)
        do {
            if let viewer = try store.shownBy(callID: opened.callID) {
                output([
                    "event": "message", "call_id": .string(opened.callID), "shown": "already",
                    "by": .string(viewer.rawValue),
                ])
                return .accepted
            }
            try store.markShown(callID: opened.callID, by: .app)
        } catch {
            logger.warning("message not recorded", metadata: ["store.error": "\(error)"])
            return SIPMessageAnswer(statusCode: 500, reasonPhrase: "Message Not Stored")
        }
        output(line(opened, source: "sip"))
        if let notice = opened.notice, let to = try? SIPURI(parsing: notice.to),
            let from = try? SIPURI(parsing: account.aor),
            let proxy = try? SIPURI(parsing: account.proxy)
        {
            let outgoing = SIPOutgoingMessage(
                to: to, from: from, proxy: proxy, contentType: "message/cpim", body: notice.body,
                password: try? device.sipPassword())
            let callID = opened.callID
            Task {
                let status = try? await agent.sendMessage(outgoing).statusCode
                output(["event": "imdn", "call_id": .string(callID), "status": JSON.int(status)])
            }
        }
        return .accepted
    }

    /// The messages extensions kept in the App Group store for a later push: the app in the foreground shows them
    /// itself (the device answered 200 for them; no push will come for most).
    private func showHeld(store: MessageStore, recipient: String, output: @Sendable (JSON) -> Void) {
        let held: [StoredMessage]
        do { held = try store.held() } catch {
            logger.warning("held messages not read", metadata: ["store.error": "\(error)"])
            return
        }
        for stored in held {
            let opened = InAppMessage(stored, device: device, recipient: recipient)
            do { try store.markShown(callID: opened.callID, by: .app) } catch { continue }
            output(line(opened, source: "store"))
        }
    }

    private func line(_ opened: InAppMessage, source: String) -> JSON {
        var line: JSONObject = [
            "event": "message", "call_id": .string(opened.callID), "from": .string(opened.from), "shown": "in-app",
            "source": .string(source),
            "display": [
                "title": .string(opened.display.title), "subtitle": .string(opened.display.subtitle),
                "body": .string(opened.display.body),
            ],
        ]
        if let reason = opened.reason { line["reason"] = .string(reason) }
        return .object(line)
    }

    static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
