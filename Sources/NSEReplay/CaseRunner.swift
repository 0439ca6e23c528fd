import Logging
import NSEAppRegistration
import NSECall
import NSECertificates
import NSEChat
import NSECrypto
import NSEDevice
import NSEExtensionBuild
import NSEHost
public import NSEJSON
import NSEPayload
import NSESIP
import NSESIPServer
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// What one case did.
public struct CaseResult: Sendable {
    public var name: String
    public var file: String
    public var passed: Bool
    /// One line per expectation that did not hold.
    public var differences: [String]
    /// The result document (or nil when the case could not run).
    public var actual: JSON?
    public var milliseconds: Double
    /// Set when the case itself is broken (unreadable, schema, setup failure).
    public var error: String?
    /// Where the case's full log is.
    public var logPath: String?
    /// `--update` changed this case's expectations.
    public var rerecorded = false
}

/// Runs one case in its own folder with its own devices, its own embedded SIP server on an ephemeral loopback
/// port, and one extension process, so cases never share state and can run in parallel.
struct CaseRunner {
    var replayCase: ReplayCase
    var workDirectory: String
    var extensionCommand: [String]
    /// The replay's logger (`nse replay` makes it); each part of the case logs to a copy naming it
    /// (``logger(for:)``).
    var logger: Logger
    /// The case's sender identities (`seal.sign_with`, `device.trust`), in its folder.
    var signers: ReplayCase.Signers { ReplayCase.Signers(directory: Path.join(workDirectory, "identities")) }

    /// How the cases that do not say run extension processes (`nse replay --extension-process`).
    var extensionProcess = ExtensionProcessPool.Mode.fresh
    var warmIdle = ExtensionProcessPool.defaultIdleTime
    /// The replay's fork servers (`nse replay --extension-launch fork`); nil: processes exec'd.
    var forkServers: ExtensionForkServers?

    /// The logger of one part of the case: `sip` (its server), `app` (the device's registration), `sender`,
    /// `caller`, in `nse.part`.
    private func logger(for part: String) -> Logger {
        var logger = logger
        logger[metadataKey: "nse.part"] = .string(part)
        return logger
    }

    func run() async -> CaseResult {
        let start = SystemClock.monotonicNanoseconds()
        var log: [String] = ["case \(replayCase.name) (\(replayCase.file))"]
        func finish(_ actual: JSON?, error: String?) -> CaseResult {
            let logPath = Path.join(workDirectory, "case.log")
            var lines = log
            if let actual { lines.append("result: " + actual.serialized(.pretty)) }
            if let error { lines.append("error: " + error) }
            try? FileSystem.writeAtomically(logPath, lines.joined(separator: "\n") + "\n")
            let differences = actual.map(compare) ?? []
            return CaseResult(
                name: replayCase.name, file: replayCase.file, passed: error == nil && differences.isEmpty,
                differences: differences, actual: actual, milliseconds: SystemClock.millisecondsSince(start),
                error: error,
                logPath: logPath)
        }
        do {
            try FileSystem.createDirectory(workDirectory)
            var device = try makeDevice()
            let other = try Device.create(at: Path.join(workDirectory, "other"))
            var server: SIPServer?
            defer { if let server { Task { await server.shutdown() } } }
            var caller: Task<CallerReport, Never>?
            var serverConfiguration: SIPServerConfiguration?
            var peer: ScriptedSIPPeer?
            defer { if let peer { Task { _ = await peer.stop() } } }
            if let script = replayCase.sip?.script {
                peer = try await startPeer(script, device: &device, log: &log)
            } else if let sip = replayCase.sip {
                let (started, configuration) = try await startServer(sip, device: &device, log: &log)
                server = started
                serverConfiguration = configuration
                if let call = sip.call {
                    caller = try await placeCall(call, server: started, device: device, log: &log)
                }
                if sip.stopBeforePush {
                    await started.shutdown()
                    server = nil
                    log.append("sip server stopped before the push")
                }
            }
            let limits = ExtensionLimits(
                budget: replayCase.budget, grace: replayCase.grace,
                memoryLimitKilobytes: replayCase.memoryLimit.map { Int($0 * 1024) })
            let command =
                replayCase.extensionCommand.map {
                    NotificationHost.shellCommand($0.hasPrefix("/") ? $0 : Path.join(Path.dirname(replayCase.file), $0))
                } ?? extensionCommand
            var configured = NotificationHost(device: device, limits: limits, extensionCommand: command)
            configured.voipMustReport = replayCase.mustReport
            configured.extensionProcesses = ExtensionProcessPool.make(
                replayCase.extensionProcess ?? extensionProcess, idleTime: replayCase.warmIdle ?? warmIdle)
            defer { configured.extensionProcesses?.evictAll() }
            configured.extensionForkServers = forkServers
            let host = configured
            // What each step did, in order (a push: its result).
            var results: [JSON] = []
            var app = AppSteps(device: device.directory)
            defer { app.end() }
            for (index, step) in replayCase.steps.enumerated() {
                switch step {
                case .wait(let seconds):
                    log.append("step \(index): wait \(seconds) s")
                    try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                    results.append(["waited_s": .double(seconds)])
                case .push(let push):
                    let bytes = try push.payload(sealingTo: device, other: other, signers: signers)
                    let pushType = PushType(rawValue: push.pushType) ?? .alert
                    let source: PayloadSource = push.payloadFile.map { .file($0) } ?? .stdin
                    let result = await Threads.run {
                        host.deliver(bytes, pushType: pushType, source: source, collapseID: push.collapseID)
                    }
                    if replayCase.isSequence { log.append("step \(index): push: \(result.outcome.rawValue)") }
                    results.append(result.json)
                case .serverRestart:
                    guard let running = server, let configuration = serverConfiguration else {
                        throw ReplayError(file: replayCase.file, field: "steps[\(index)]", message: "no SIP server")
                    }
                    await running.shutdown()
                    server = nil
                    // The same port: freed a moment ago, but any process's outgoing connection may be handed it as
                    // its local port meanwhile; such a collision is waited out (bounded), never taken as a failure.
                    var attempt = 0
                    while server == nil {
                        let restarted = SIPServer(configuration: configuration, logger: logger(for: "sip"))
                        do {
                            let bound = try await restarted.start()
                            server = restarted
                            log.append(
                                "step \(index): sip server restarted: \(bound.first?.proxyURI.description ?? "-")")
                        } catch {
                            await restarted.shutdown()
                            attempt += 1
                            guard attempt < 50, Self.isAddressInUse(error) else { throw error }
                            try await Task.sleep(nanoseconds: 100_000_000)
                        }
                    }
                    results.append(["server": "restarted", "attempts": .int(Int64(attempt + 1))])
                case .send(let message):
                    guard let server else {
                        throw ReplayError(file: replayCase.file, field: "steps[\(index)]", message: "no SIP server")
                    }
                    let status = try await send(message, device: device, server: server)
                    log.append("step \(index): sent \(message.callID): \(status)")
                    results.append(["sent": .string(message.callID), "status": .int(Int64(status))])
                case .app(let step):
                    let done = try await app.perform(step)
                    log.append("step \(index): app \(step.action.rawValue): \(done.serialized())")
                    results.append(done)
                }
            }
            // What the extension answered differently from the recording: the log's, not the verdict's.
            if let peer { log += await peer.stop() }
            // One push: its result is the case's. A sequence: what each step did, in order.
            var actual = replayCase.isSequence ? JSON.object(["steps": .array(results)]) : results[0]
            if let caller, case .object(var object) = actual {
                // The caller's side of the call, as `nse call` prints it.
                object["caller"] = await caller.value.json
                actual = .object(object)
            }
            return finish(actual, error: nil)
        } catch let error as ReplayError {
            return finish(nil, error: error.description)
        } catch {
            return finish(nil, error: "\(replayCase.file): setup failed: \(error)")
        }
    }

    /// The case's expectations against what happened: the one push's, or each push's of a sequence (named
    /// `steps[N]` as in the case file).
    private func compare(_ actual: JSON) -> [String] {
        guard replayCase.isSequence else {
            return Expectations.compare(expected: replayCase.pushes[0].expect, actual: actual)
        }
        let results = actual["steps"]?.arrayValue ?? []
        var differences: [String] = []
        for (index, step) in replayCase.steps.enumerated() {
            let expect: JSONObject
            switch step {
            case .push(let push): expect = push.expect
            case .app(let app) where app.expect != nil: expect = app.expect ?? [:]
            default: continue
            }
            guard index < results.count else {
                differences.append("steps[\(index)]: no result")
                continue
            }
            if case .app = step {
                for (key, want) in expect where results[index][key] != want {
                    differences.append(
                        "steps[\(index)]: \(key): expected \(want.serialized()), got \(results[index][key]?.serialized() ?? "(absent)")"
                    )
                }
                continue
            }
            differences += Expectations.compare(expected: expect, actual: results[index]).map {
                "steps[\(index)]: \($0)"
            }
        }
        return differences
    }

    /// Whether a server could not start because its port is taken (said in words by `NetworkFailure`).
    static func isAddressInUse(_ error: any Error) -> Bool {
        "\(error)".lowercased().contains("address already in use")
    }

    private func makeDevice() throws -> Device {
        var options = Device.Options()
        options.bundleID = replayCase.device.bundleID
        options.teamID = replayCase.device.teamID
        options.filtering = replayCase.device.filtering
        options.locale = replayCase.device.locale
        var device = try Device.create(at: Path.join(workDirectory, "device"), options: options)
        if let grants = replayCase.device.grants {
            device.config.appGroups = grants.appGroups
            var entitled = Entitlements()
            entitled.keychainAccessGroups = grants.keychainAccessGroups
            device.config.keychainAccessGroups = entitled.keychainAccessGroups(team: device.config.teamID)
            device.config.filtering = grants.filtering || replayCase.device.filtering
            device.config.communication = grants.communication
            device.config.timeSensitive = grants.timeSensitive
            device.config.criticalAlerts = grants.criticalAlerts
        }
        if let file = replayCase.device.entitlements {
            let granted: Entitlements
            do { granted = try Entitlements(contentsOf: file) } catch {
                throw ReplayError(file: replayCase.file, field: "device.entitlements", message: error.description)
            }
            device.config.appGroups = granted.appGroups
            device.config.keychainAccessGroups = granted.keychainAccessGroups(team: device.config.teamID)
            device.config.filtering = granted.filtering || replayCase.device.filtering
            device.config.communication = granted.communication
            device.config.timeSensitive = granted.timeSensitive
            device.config.criticalAlerts = granted.criticalAlerts
        }
        func write(_ entries: [String: String], folder: String) throws {
            guard !entries.isEmpty else { return }
            let directory = Path.join(device.stringsDirectory, folder)
            try FileSystem.createDirectory(directory)
            let text = entries.sorted { $0.key < $1.key }.map { "\"\(escape($0.key))\" = \"\(escape($0.value))\";" }
            try FileSystem.writeAtomically(Path.join(directory, "Case.strings"), text.joined(separator: "\n") + "\n")
        }
        try write(replayCase.device.strings, folder: "Base.lproj")
        try write(replayCase.device.localeStrings, folder: "\(replayCase.device.locale).lproj")
        var voip = device.config.voip
        if let handler = replayCase.device.appHandler {
            let resolved =
                handler.hasPrefix("/") || handler == "builtin" || handler.hasPrefix("http")
                ? handler : Path.join(Path.dirname(replayCase.file), handler)
            voip.appHandler = VoIPSettings.handler(from: resolved)
        }
        if let deadline = replayCase.device.appDeadline { voip.appDeadline = deadline }
        if let strikes = replayCase.device.maxStrikes { voip.maxStrikes = strikes }
        if let age = replayCase.device.maxOfferAge { voip.maxOfferAge = age }
        if let call = replayCase.device.call { voip.call = call }
        if let framework = replayCase.device.voipFramework { voip.framework = framework }
        device.config.voip = voip
        if let version = replayCase.device.iosVersion { device.config.iosVersion = version }
        if let model = replayCase.device.model { device.config.model = model }
        if let watchdog = replayCase.device.coreWatchdog { device.config.sharedCoreWatchdog = watchdog }
        device.config.requireSignedSender = replayCase.device.requireSignedSender
        if let state = replayCase.device.lockState { device.config.lockState = state }
        if let previews = replayCase.device.showPreviews { device.config.showPreviews = previews }
        try device.save()
        let group = try device.appGroup()
        for _ in 0..<replayCase.device.strikes { try group.voip.recordStrike(reason: "preset by the case") }
        // What a recorded push found in the store: held messages as received, and those already shown.
        for message in replayCase.appGroup.held { try group.messages.keep(message) }
        for (callID, viewer) in replayCase.appGroup.shown { try group.messages.markShown(callID: callID, by: viewer) }
        for room in replayCase.appGroup.rooms {
            try group.rooms.keep(address: room.address, subject: room.subject, participants: room.participants)
        }
        for (contact, names) in replayCase.device.trust {
            for name in names { try group.trust.trust(try signers.identity(name).publicKey.base64, for: contact) }
        }
        if let keyFile = replayCase.device.keyFile { try useKey(keyFile, on: &device) }
        try keepKeychainItems(on: device)
        if let mode = replayCase.device.keyMode { try FileSystem.setPermissions(device.secretKeyPath, mode_t(mode)) }
        return device
    }

    /// What the app kept in the keychain before the push, as `nse device keychain add` keeps it (the app's side:
    /// the device's lock does not refuse it).
    private func keepKeychainItems(on device: Device) throws {
        guard !replayCase.device.keychain.isEmpty else { return }
        let store = try device.keychain()
        let groups = device.config.keychainGroups(applicationIdentifier: device.config.applicationIdentifier)
        for (index, seed) in replayCase.device.keychain.enumerated() {
            func fail(_ field: String, _ message: String) -> ReplayError {
                ReplayError(file: replayCase.file, field: "device.keychain[\(index)]\(field)", message: message)
            }
            let group = seed.accessGroup ?? groups[0]
            guard groups.contains(group) else {
                throw fail(
                    ".access_group", "\(group) is not the app's (it has \(groups.joined(separator: ", ")))")
            }
            let path: String
            switch seed.secret {
            case .file(let file): path = file
            case .deviceKey: path = device.secretKeyPath
            }
            let data: [UInt8]?
            do { data = try FileSystem.readFile(path, limit: 1 << 20) } catch {
                throw fail(".data_file", error.description)
            }
            guard let data else { throw fail(".data_file", "\(path) is more than 1 MB") }
            var attributes: [String: KeychainItem.Value] = [:]
            if let service = seed.service { attributes["svce"] = .text(service) }
            if let account = seed.account { attributes["acct"] = .text(account) }
            let item = KeychainItem.added(
                itemClass: "genp", accessGroup: group, attributes: attributes, accessible: seed.accessible, data: data)
            guard try store.add(item, identity: KeychainItem.identity["genp"] ?? []) else {
                throw fail("", "the same item (service, account, group) is kept twice")
            }
        }
    }

    /// Gives the case's device the key a recorded case's content was sealed to: read from where the case names it
    /// (never copied into the case), installed as the device's own.
    private func useKey(_ path: String, on device: inout Device) throws {
        func fail(_ message: String) -> ReplayError {
            ReplayError(file: replayCase.file, field: "device.key_file", message: message)
        }
        let source =
            path.hasSuffix(".key") || !FileSystem.isDirectory(path) ? path : Path.join(path, "keys", "private.key")
        let text: String?
        do { text = try FileSystem.readText(source, limit: 4096) } catch { throw fail(error.description) }
        guard let text, let bytes = Base64.decode(text.filter { !$0.isWhitespace }) else {
            throw fail("\(source) does not hold a base64 private key")
        }
        let publicKey: PublicKey
        do { publicKey = try SecretKey(bytes: bytes).publicKey() } catch {
            throw fail("\(source): \(error.description)")
        }
        try FileSystem.writeAtomically(device.secretKeyPath, Base64.encode(bytes) + "\n", mode: 0o600)
        device.config.publicKey = publicKey.base64
        device.config.keyID = publicKey.keyID
        try device.save()
    }

    private func escape(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }

    /// Starts the case's embedded SIP server, gives the device an account on it, registers it as the app would,
    /// and has the held messages sent to it.
    /// Returns the server and its configuration with the port it bound (to start it again there).
    private func startServer(_ spec: ReplayCase.SIPSpec, device: inout Device, log: inout [String]) async throws
        -> (SIPServer, SIPServerConfiguration)
    {
        var configuration = SIPServerConfiguration(listeners: [
            .init(transport: SIPTransportKind(token: spec.transport) ?? .tcp, port: 0)
        ])
        configuration.push.enabled = false
        configuration.messageAcceptTimeout = .milliseconds(100)
        if let password = spec.serverPassword { configuration.users = ["bob": password] }
        var tlsCA: String?
        if spec.transport == "tls" {
            let files = try SelfSignedCertificate.files(in: workDirectory, name: "sip")
            configuration.tls = .init(certificatePath: files.certificate, keyPath: files.key)
            tlsCA = files.certificate
        }
        configuration.faults = faults(spec.faults)
        // A server that restarts keeps what it holds (and its registrations) in a database, as `nse sip-server --db`.
        if replayCase.restartsServer { configuration.databaseDirectory = Path.join(workDirectory, "sip-db") }
        let server = SIPServer(configuration: configuration, logger: logger(for: "sip"))
        let addresses = try await server.start()
        guard let address = addresses.first else {
            throw ReplayError(file: replayCase.file, field: "sip", message: "the SIP server bound nothing")
        }
        configuration.listeners[0].port = address.port
        let proxy = address.proxyURI.description
        log.append("sip server: \(proxy)")
        try device.setSIPAccount(
            aor: "sip:bob@example.org", proxy: proxy, password: spec.password ?? "", expires: 3600, caFile: tlsCA)
        try device.save()
        var agentConfiguration = AppRegistration.configuration(for: device.config.sip!)
        agentConfiguration.timers = SIPTimers(t1: .milliseconds(50))
        let agent = SIPUserAgent(configuration: agentConfiguration, logger: logger(for: "app"))
        defer { Task { await agent.close() } }
        if spec.register {
            let registration = try AppRegistration.registration(
                for: device, account: device.config.sip!, password: spec.password)
            let result = try await agent.register(registration)
            log.append("app registration: \(result.statusCode)")
        }
        await agent.close()
        for message in spec.held {
            log.append("held \(message.callID): \(try await send(message, device: device, server: server))")
        }
        let store = try device.appGroup().messages
        for message in spec.storePrefill {
            let (type, body) = try content(message, device: device)
            try store.keep(
                StoredMessage(
                    callID: message.callID, from: message.from, to: "sip:bob@example.org", contentType: type,
                    body: body, receivedAt: SystemClock.unixMilliseconds()))
        }
        return (server, configuration)
    }

    /// Starts the scripted peer of a recorded exchange (`sip.script`) and gives the device an account on it: the
    /// recorded address of record, over the recorded transport, with a password the peer never checks (the recorded
    /// one was never kept).
    private func startPeer(_ script: SIPScript, device: inout Device, log: inout [String]) async throws
        -> ScriptedSIPPeer
    {
        var tls: ScriptedSIPPeer.TLSFiles?
        if script.transport == .tls {
            let files = try SelfSignedCertificate.files(in: workDirectory, name: "sip")
            tls = ScriptedSIPPeer.TLSFiles(certificate: files.certificate, key: files.key)
        }
        let peer = ScriptedSIPPeer(script: script, logger: logger(for: "sip"))
        let proxy = try await peer.start(tls: tls)
        log.append("sip peer: \(proxy) plays \(script.events.count) recorded events")
        if script.truncated > 0 { log.append("sip peer: the recording left out its last \(script.truncated) events") }
        try device.setSIPAccount(
            aor: script.addressOfRecord, proxy: proxy.description, password: "replay",
            expires: Int64(script.registerExpires.map { max(1, min($0, 604_800)) } ?? 3600),
            caFile: tls?.certificate)
        try device.save()
        return peer
    }

    /// Alice sends one message to the device through the case's server; the final status she hears.
    private func send(_ message: ReplayCase.HeldMessage, device: Device, server: SIPServer) async throws -> Int {
        guard let address = await server.addresses.first, let account = device.config.sip else {
            throw ReplayError(file: replayCase.file, field: "sip", message: "the SIP server bound nothing")
        }
        var configuration = AppRegistration.configuration(for: account)
        configuration.timers = SIPTimers(t1: .milliseconds(50))
        let sender = SIPUserAgent(configuration: configuration, logger: logger(for: "sender"))
        let (type, body) = try content(message, device: device)
        var outgoing = SIPOutgoingMessage(
            to: try SIPURI(parsing: "sip:bob@example.org"), from: try SIPURI(parsing: message.from),
            proxy: address.proxyURI, contentType: type, body: body)
        outgoing.callID = message.callID
        do {
            let sent = try await sender.sendMessage(outgoing)
            await sender.close()
            return sent.statusCode
        } catch {
            await sender.close()
            throw error
        }
    }

    /// Places the case's call through the embedded server (as `nse call` does) and returns once the server has
    /// reached the step the push waits for: the INVITE held, or the held call cancelled by its caller.
    private func placeCall(_ spec: ReplayCase.CallSpec, server: SIPServer, device: Device, log: inout [String])
        async throws -> Task<CallerReport, Never>
    {
        guard let address = await server.addresses.first, let account = device.config.sip else {
            throw ReplayError(file: replayCase.file, field: "sip.call", message: "the SIP server bound nothing")
        }
        let sdp = SessionDescription(offerFrom: "127.0.0.1", video: spec.video).bytes
        let call = SIPOutgoingCall(
            to: try SIPURI(parsing: account.aor), from: try SIPURI(parsing: spec.from), proxy: address.proxyURI,
            body: sdp, callID: spec.callID, displayName: spec.displayName)
        let configuration = SIPUserAgentConfiguration(tls: .caFile(account.caFile), userAgent: "nse-replay-caller/1")
        let driver = CallerDriver(
            call: call,
            plan: CallerMachine.Plan(
                cancelAfter: spec.cancelAfter, hangupAfter: spec.hangupAfter, timeout: spec.timeout),
            configuration: configuration, logger: logger(for: "caller"))
        let caller = Task { await driver.report(sealed: false) }
        let wanted: CallStep = spec.pushWhen == .held ? .held : .cancelled
        let events = server.events
        let bound = spec.timeout + (spec.cancelAfter ?? 0) + 2
        let reached = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in events {
                    if case .call(_, spec.callID, wanted, _) = event { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64(bound * 1000)))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        log.append("call \(spec.callID): \(reached ? "" : "not ")\(wanted.rawValue) before the push")
        return caller
    }

    /// A held message's Content-Type and body, as Linphone would send it.
    private func content(_ message: ReplayCase.HeldMessage, device: Device) throws -> (String, [UInt8]) {
        if let raw = message.raw { return raw }
        var type = "text/plain;charset=UTF-8"
        var body: [UInt8]
        if message.sealed {
            let signing = try message.signWith.map {
                ReplayCase.Signing(identity: try signers.identity($0), other: device)
            }
            body = Array(
                try ReplayCase.seal(message.plaintext ?? .string(message.text ?? ""), to: device, signing: signing).utf8
            )
            type = "application/vnd.nse.envelope"
        } else {
            body = Array((message.text ?? "").utf8)
        }
        guard message.cpim else { return (type, body) }
        let cpim = CPIMMessage(
            headers: [
                (name: "From", value: "<\(message.from)>"), (name: "To", value: "<sip:bob@example.org>"),
                (name: "DateTime", value: SystemClock.rfc3339(unixSeconds: SystemClock.unixMilliseconds() / 1000)),
                (name: "NS", value: "imdn <\(IMDN.namespace)>"), (name: "imdn.Message-ID", value: message.callID),
                (name: "imdn.Disposition-Notification", value: "positive-delivery"),
            ],
            contentHeaders: [(name: "Content-Type", value: type), (name: "Content-Length", value: String(body.count))],
            body: body)
        return ("message/cpim", cpim.bytes)
    }

    private func faults(_ object: JSONObject) -> SIPServerConfiguration.Faults {
        .init(
            delayMilliseconds: Int(object["delay_ms"]?.intValue ?? 0),
            dropFirstPackets: Int(object["drop_first_packets"]?.intValue ?? 0),
            alwaysChallenge: object["always_challenge"]?.boolValue ?? false,
            answer503: object["answer_503"]?.boolValue ?? false,
            resetConnectionAfterRegister: object["reset_after_register"]?.boolValue ?? false,
            deliverDuplicates: object["deliver_duplicates"]?.boolValue ?? false,
            unrelatedCallIDFirst: object["unrelated_call_id_first"]?.boolValue ?? false,
            neverAnswer: object["never_answer"]?.boolValue ?? false)
    }
}
