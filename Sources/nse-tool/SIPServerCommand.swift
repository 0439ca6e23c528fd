import ArgumentParser
import Logging
import NSEAPNs
import NSECommandLine
import NSEHTTP
import NSEHost
import NSEJSON
import NSEMetrics
import NSESIP
import NSESIPServer
import NSESystem

/// `nse sip-server`: the embedded registrar and store-and-forward proxy (Flexisip's fork-late), so the SIP fetch
/// path works on a machine with no outside server.
struct SIPServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sip-server",
        abstract:
            "Run the embedded SIP registrar and proxy that holds MESSAGEs and calls and pushes their Call-ID.",
        discussion: """
            Prints one JSON line with the bound addresses (port 0 picks a free one), then runs until SIGINT or SIGTERM. \
            A MESSAGE for an AOR whose binding has RFC 8599 push parameters is held in --db and pushed to \
            {push-url}/3/device/{token}; the device's next REGISTER gets it with its original Call-ID. An INVITE \
            for such an AOR is held the same way (the caller hears 100 Trying), pushed as PushKit (voip token) or \
            as the IC_MSG alert, and relayed to the device when it registers; the dialog then runs through the \
            server (Record-Route). CANCEL answers 487, --call-fork-timeout 408. It is also the focus of chat rooms made \
            through its conference factory (nse room; invitations held and pushed GC_MSG like calls, messages to a room \
            passed on to every other participant).
            """)

    @Option(
        name: .customLong("listen"),
        help: ArgumentHelp(
            "A listener, repeatable: udp|tcp|tls:HOST:PORT (IPv6 as [::1]).", valueName: "transport:host:port"))
    var listeners: [String] = []

    @Option(
        help: ArgumentHelp(
            "Folder for the server's database (sip-server.db: bindings and held messages, kept across restarts); without it they live in memory only.",
            valueName: "dir"))
    var db: String?

    @Option(
        help: ArgumentHelp(
            "APNs-compatible base URL pushes go to, e.g. http://127.0.0.1:8443 (nse serve, or any APNs endpoint).",
            valueName: "url"))
    var pushURL: String?

    @Flag(help: "Send no pushes.")
    var noPush = false

    @Option(help: ArgumentHelp("CA file for the push URL's TLS certificate.", valueName: "file"))
    var pushCA: String?

    @Option(
        help: ArgumentHelp(
            "Token-based APNs authentication: sign provider tokens with this key (AuthKey_KEYID.p8).", valueName: "file"
        ))
    var pushAuthKeyFile: String?

    @Option(help: ArgumentHelp("The APNs key id (kid), with --push-auth-key-file.", valueName: "id"))
    var pushKeyId: String?

    @Option(help: ArgumentHelp("The team id (iss), with --push-auth-key-file.", valueName: "id"))
    var pushTeamId: String?

    @Option(
        help: ArgumentHelp("`username password` lines: enables digest authentication of REGISTER.", valueName: "file"))
    var users: String?

    @Option(help: "The digest realm (default: the AOR's domain).")
    var realm: String?

    @Option(help: ArgumentHelp("Certificate chain (PEM) for tls listeners.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("Private key (PEM) for tls listeners.", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "Seconds before the sender gets 202 Accepted for a held message (Flexisip: 5).", valueName: "seconds"))
    var acceptTimeout: Double = 5

    @Option(help: ArgumentHelp("Seconds a held message is kept (Flexisip: 604800).", valueName: "seconds"))
    var messageExpires: Int = 604_800

    @Option(
        help: ArgumentHelp(
            "Seconds a call waits for a device's final answer before the caller hears 408 (Flexisip: 90).",
            valueName: "seconds"))
    var callForkTimeout: Double = 90

    @Option(
        help: ArgumentHelp(
            "Seconds between repeats of a held call's alert push (Flexisip's call-remote-push-interval, 0 to 30); 0 sends it once. PushKit pushes are not repeated.",
            valueName: "seconds"))
    var callRemotePushInterval: Double = 0

    @Flag(
        help:
            "Push a call whose INVITE carries a sealed offer (application/vnd.nse.envelope) as an alert with the offer as enc, for the extension to escalate (Apple's end-to-end-encrypted VoIP route), instead of PushKit."
    )
    var e2eeCalls = false

    @Option(
        name: .customLong("e2ee-calls-for"),
        help: ArgumentHelp(
            "The same route for this address of record only (repeat for several devices); the others keep PushKit.",
            valueName: "aor"))
    var e2eeCallsFor: [String] = []

    @Option(
        help: ArgumentHelp(
            "The conference factory's URI: an INVITE to it with a Subject and a resource-lists body creates a chat room in its domain (default: conference-factory at whichever domain the INVITE names).",
            valueName: "uri"))
    var conferenceFactory: String?

    @Flag(
        help:
            "Print every server event (registered, bad_push_parameters, held, pushed, delivered, expired, call, room_created, invited, invitation_held, joined, declined, subject, participant_added, participant_removed) as a JSON line on stdout."
    )
    var events = false

    @Option(
        help: ArgumentHelp(
            "Serve GET /metrics (Prometheus's text format: registrations, held messages, calls, pushes) on this HTTP listener.",
            valueName: "host:port"))
    var metricsListen: String?

    @Option(
        help: ArgumentHelp(
            "Write each push sent for a held MESSAGE as a replay case in this folder: the push, the messages held for the address, bodies as held (docs/replay.md).",
            valueName: "dir"))
    var record: String?

    @Flag(
        help:
            "Unsafe: keep in recorded cases the plain-text bodies of held messages a push was not for (by default only their length)."
    )
    var recordPlaintext = false

    @OptionGroup(title: "Fault knobs (for testing clients)") var faults: FaultOptions

    struct FaultOptions: ParsableArguments {
        @Option(help: ArgumentHelp("Wait this long before answering or forwarding.", valueName: "ms"))
        var delayMs: Int = 0
        @Option(help: ArgumentHelp("UDP: ignore the first N datagrams.", valueName: "n"))
        var dropFirstPackets: Int = 0
        @Flag(help: "Answer every REGISTER with 401.")
        var alwaysChallenge = false
        @Flag(help: "Answer every request with 503.")
        var answer503 = false
        @Flag(help: "Close a TCP/TLS connection right after receiving a REGISTER, without answering.")
        var resetAfterRegister = false
        @Flag(help: "Deliver each held MESSAGE twice (a retransmission).")
        var deliverDuplicates = false
        @Flag(help: "Deliver a MESSAGE with an unrelated Call-ID before the held ones.")
        var unrelatedCallIDFirst = false
        @Flag(help: "Never answer anything.")
        var neverAnswer = false
    }

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        for listener in listeners {
            do { _ = try SIPServerConfiguration.parseListener(listener) } catch {
                throw ValidationError("--listen \(listener): \(error)")
            }
        }
        if listeners.contains(where: { $0.hasPrefix("tls:") }) && tlsCert == nil {
            throw ValidationError("a tls listener needs --tls-cert and --tls-key")
        }
        guard acceptTimeout > 0 else { throw ValidationError("--accept-timeout must be more than 0") }
        guard messageExpires > 0 else { throw ValidationError("--message-expires must be more than 0") }
        guard callForkTimeout > 0, callForkTimeout <= 86_400 else {
            throw ValidationError("--call-fork-timeout must be more than 0 and at most 86400")
        }
        guard callRemotePushInterval >= 0, callRemotePushInterval <= 30 else {
            throw ValidationError("--call-remote-push-interval must be from 0 to 30")
        }
        if !noPush && pushURL == nil { throw ValidationError("give --push-url URL (where pushes go) or --no-push") }
        if let metricsListen { _ = try ServeCommand.parseAddress(metricsListen, option: "--metrics-listen") }
        if let conferenceFactory, (try? SIPURI(parsing: conferenceFactory))?.user == nil {
            throw ValidationError("--conference-factory \(conferenceFactory): not a SIP URI with a user part")
        }
        if recordPlaintext && record == nil { throw ValidationError("--record-plaintext needs --record DIR") }
        if pushAuthKeyFile != nil || pushKeyId != nil || pushTeamId != nil,
            pushAuthKeyFile == nil || pushKeyId == nil || pushTeamId == nil
        {
            throw ValidationError("--push-auth-key-file, --push-key-id and --push-team-id go together")
        }
    }

    func makeConfiguration() throws -> SIPServerConfiguration {
        var configuration = SIPServerConfiguration(listeners: try listeners.map(SIPServerConfiguration.parseListener))
        if configuration.listeners.isEmpty {
            configuration.listeners = [.init(transport: .udp, port: 5060), .init(transport: .tcp, port: 5060)]
        }
        configuration.databaseDirectory = db
        configuration.usersFile = users
        configuration.realm = realm
        if let tlsCert, let tlsKey { configuration.tls = .init(certificatePath: tlsCert, keyPath: tlsKey) }
        configuration.messageAcceptTimeout = .milliseconds(Int(acceptTimeout * 1000))
        configuration.heldMessageLifetime = messageExpires
        configuration.callForkTimeout = .milliseconds(Int(callForkTimeout * 1000))
        configuration.conferenceFactory = try conferenceFactory.map { try SIPURI(parsing: $0) }
        configuration.e2eeCalls = e2eeCalls
        configuration.e2eeCallsFor = Set(e2eeCallsFor.map(SIPServer.aorKey))
        configuration.callRemotePushInterval = .milliseconds(Int(callRemotePushInterval * 1000))
        configuration.push.enabled = !noPush
        if let pushURL {
            configuration.push.apnsURL = pushURL
            configuration.push.apnsDevelopmentURL = pushURL
        }
        configuration.push.tls.caFilePath = pushCA
        configuration.faults = .init(
            delayMilliseconds: faults.delayMs, dropFirstPackets: faults.dropFirstPackets,
            alwaysChallenge: faults.alwaysChallenge,
            answer503: faults.answer503, resetConnectionAfterRegister: faults.resetAfterRegister,
            deliverDuplicates: faults.deliverDuplicates, unrelatedCallIDFirst: faults.unrelatedCallIDFirst,
            neverAnswer: faults.neverAnswer)
        return configuration
    }

    /// Whether the server runs every task on its one event-loop thread, where its sockets are
    /// (`EventLoopGlobalExecutor`, installed by `NSE.main`): only when nothing it does waits for the disk. With `--db`
    /// it syncs each binding and held message, with `--record` each case file, from its actor: on the loop's thread
    /// each sync would hold up every socket, so those keep the cooperative pool.
    var runsOnOneThread: Bool { db == nil && record == nil }

    func run() async throws {
        var configuration: SIPServerConfiguration
        do { configuration = try makeConfiguration() } catch { throw Failure(.usage, "\(error)").exit() }
        if let record {
            do {
                configuration.recording = try ServerCaseRecording(directory: record, plaintext: recordPlaintext)
            } catch {
                throw Failure(.config, "--record: \(error.description)").exit()
            }
        }
        if let pushAuthKeyFile, let pushKeyId, let pushTeamId {
            let cache: ProviderTokenCache
            do {
                cache = ProviderTokenCache(
                    signer: try await ProviderTokenSigner(
                        keyFile: pushAuthKeyFile, keyID: pushKeyId, teamID: pushTeamId))
            } catch {
                throw Failure(.config, "--push-auth-key-file \(error.description)").exit()
            }
            configuration.push.providerToken = { await cache.token() }
        }
        // This server's own registry (docs/sip.md, "Metrics"), served by --metrics-listen.
        let registry = MetricsRegistry()
        // The process's event loop, which every task runs on too without a database (`runsOnOneThread`).
        let server = SIPServer(
            configuration: configuration, eventLoopGroup: SIPUserAgent.processEventLoopGroup,
            metrics: SIPServerMetrics(factory: registry.factory), logger: Logger(label: "nse.sip-server"))
        let addresses: [SIPServerBoundAddress]
        do { addresses = try await server.start() } catch {
            await server.shutdown()
            // A database that is damaged or from a newer nse must be moved aside (78); a full or read-only disk, a
            // port in use and the like are I/O failures (74).
            let status: ExitStatus = (error as? SIPServerError)?.code == .configuration ? .config : .ioError
            throw Failure(status, "sip-server: \(error)").exit()
        }
        var listening: JSONObject = [
            "listening": .array(
                addresses.map {
                    [
                        "transport": .string($0.transport.rawValue), "host": .string($0.host),
                        "port": .int(Int64($0.port)), "uri": .string($0.proxyURI.description),
                    ]
                })
        ]
        // A service group stopped gracefully by SIGTERM or SIGINT: the server closes its listeners, cancels its
        // pushes and finishes its events; the metrics listener, beside it in the group, stops after it.
        var lifecycleLogger = Logger(label: "nse.sip-server.lifecycle")
        lifecycleLogger.logLevel = .warning
        let (metricsURLs, metricsURL) = AsyncStream.makeStream(of: String.self)
        var metrics: MetricsListener?
        if let metricsListen {
            let address = try ServeCommand.parseAddress(metricsListen, option: "--metrics-listen")
            metrics = MetricsListener(
                host: address.host, port: address.port, registry: registry, logger: lifecycleLogger,
                onListening: { metricsURL.yield($0) })
        } else {
            metricsURL.finish()
        }
        let (trapping, trapped) = AsyncStream.makeStream(of: Void.self)
        let group = Task { [metrics, lifecycleLogger] () -> (any Error)? in
            defer {
                metricsURL.finish()
                trapped.finish()
            }
            do {
                try await server.runUntilSignalled(
                    beside: metrics.map { [$0] } ?? [], logger: lifecycleLogger,
                    onTrapping: {
                        trapped.yield()
                        trapped.finish()
                    })
                return nil
            } catch {
                return error
            }
        }
        // The line names every listener bound, the metrics one too: it waits for it (or for the group's failure),
        // and for SIGTERM to be trapped, so that a SIGTERM sent on reading it stops the server (exit 0).
        var printer: Task<Void, Never>?
        var eventLines: LineWriter?
        var boundMetrics: String?
        for await url in metricsURLs {
            boundMetrics = url
            break
        }
        var isTrapping = false
        for await _ in trapping { isTrapping = true }
        if isTrapping, metricsListen == nil || boundMetrics != nil {
            if let boundMetrics { listening["metrics"] = .string(boundMetrics) }
            StandardStreams.writeOut(JSON.object(listening).serialized() + "\n")
            // Not a service of the group: a reader that stops reading stdout must not hold the exit up. The lines are
            // written by a thread of their own, as the server's tasks may share its sockets' thread (a process that
            // cannot make one writes them itself).
            if events {
                let lines = LineWriter(fd: 1)
                eventLines = lines
                printer = Task {
                    for await event in server.events {
                        let line = event.json.serialized() + "\n"
                        if let lines { lines.write(line) } else { StandardStreams.writeOut(line) }
                    }
                }
            }
        }
        let failure = await group.value
        if failure != nil { await server.shutdown() }
        if let eventLines {
            // The events end with the server: the printer hands on the last ones, and the writing thread has a second
            // at most to write them.
            await printer?.value
            _ = await Threads.run { eventLines.finish(waitingUpTo: 1) }
        } else {
            printer?.cancel()
        }
        if let error = failure {
            let option = error is MetricsListenerError ? "--metrics-listen: " : ""
            throw Failure(.ioError, "sip-server: \(option)\(error)").exit()
        }
    }
}

extension SIPServerEvent {
    /// One JSON object per event.
    var json: JSON {
        switch self {
        case .registered(let aor, let contact, let expires, let transport):
            return [
                "event": "registered", "aor": .string(aor), "contact": .string(contact),
                "expires": .int(Int64(expires)), "transport": .string(transport.rawValue),
            ]
        case .unregistered(let aor, let contact):
            return ["event": "unregistered", "aor": .string(aor), "contact": .string(contact)]
        case .badPushParameters(let aor, let problem):
            return [
                "event": "bad_push_parameters", "aor": .string(aor), "problem": .string(problem.code),
                "detail": .string(problem.description), "push": .string(problem.pushAction),
            ]
        case .held(let aor, let callID, let id, let devices):
            return [
                "event": "held", "aor": .string(aor), "call_id": .string(callID), "id": .string(id),
                "devices": .array(devices.map(JSON.string)),
            ]
        case .pushed(let aor, let callID, let url, let status, let reason):
            return [
                "event": "pushed", "aor": .string(aor), "call_id": .string(callID), "url": .string(url),
                "status": JSON.int(status), "reason": .string(reason),
            ]
        case .forwarded(let aor, let callID, let transport, let attempt):
            return [
                "event": "forwarded", "aor": .string(aor), "call_id": .string(callID),
                "transport": .string(transport.rawValue), "attempt": .int(Int64(attempt)),
            ]
        case .delivered(let aor, let callID, let id, let device, let remaining):
            return [
                "event": "delivered", "aor": .string(aor), "call_id": .string(callID), "id": .string(id),
                "device": JSON.string(device), "remaining": .int(Int64(remaining)),
            ]
        case .expired(let aor, let callID, let id, let devices):
            return [
                "event": "expired", "aor": .string(aor), "call_id": .string(callID), "id": .string(id),
                "devices": .array(devices.map(JSON.string)),
            ]
        case .answered(let method, let callID, let status):
            return [
                "event": "answered", "method": .string(method), "call_id": .string(callID),
                "status": .int(Int64(status)),
            ]
        case .call(let aor, let callID, let step, let status):
            return [
                "event": "call", "aor": .string(aor), "call_id": .string(callID), "step": .string(step.rawValue),
                "status": JSON.int(status),
            ]
        case .room(let room, let step, let aor, let device, let status):
            return [
                "event": .string(step.rawValue), "room": .string(room), "aor": JSON.string(aor),
                "device": JSON.string(device), "status": JSON.int(status),
            ]
        }
    }
}
