import ArgumentParser
import Logging
import NSEAPNs
import NSEAPNsServer
import NSECommandLine
import NSEDevice
import NSEFleet
import NSEHost
import NSEJSON
import NSEMetrics
import NSESystem
import Synchronization

/// `nse serve`: an APNs-shaped HTTP endpoint that runs the extension for every push it accepts.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve POST /3/device/{token} as APNs does and run the extension for every accepted push.",
        discussion: """
            Prints one JSON line with the listening URLs (port 0 picks a free one), then serves until SIGINT or \
            SIGTERM, when it stops accepting and finishes every accepted push. Each push is recorded in its \
            device's notifications/results.db (SQLite) before it is answered 200; results are served at \
            GET /v1/devices/{token}/notifications (docs/serve.md).
            """)

    @Option(
        help: ArgumentHelp(
            "The listener: HTTP/1.1 and HTTP/2 with prior knowledge (h2c); with --tls-cert, h2 and http/1.1 over TLS (ALPN).",
            valueName: "host:port"))
    var listen: String = "127.0.0.1:8443"

    @Option(
        help: ArgumentHelp(
            "An extra cleartext HTTP/2-only listener (prior knowledge), e.g. beside a TLS --listen.",
            valueName: "host:port"))
    var listenH2c: String?

    @Option(
        help: ArgumentHelp("A device container, repeatable: its remote and voip tokens are served.", valueName: "dir"))
    var device: [String] = []

    @Option(
        help: ArgumentHelp(
            "A folder of device containers (nse device init-many), repeatable: each is opened on its first push.",
            valueName: "dir"))
    var devices: [String] = []

    @Option(help: "Extensions run at once (2 × cores unless given).")
    var concurrency: Int = PushService.defaultConcurrency

    @Option(help: "Accepted pushes that may wait for a free slot; beyond that, 429 TooManyRequests.")
    var queue: Int = 256

    @Option(help: ArgumentHelp("Certificate chain (PEM): serve TLS with ALPN h2 and http/1.1.", valueName: "file"))
    var tlsCert: String?

    @Option(help: ArgumentHelp("Private key (PEM) for --tls-cert.", valueName: "file"))
    var tlsKey: String?

    @Option(
        help: ArgumentHelp(
            "CA certificates (PEM) that sign providers' client certificates: certificate-based provider authentication on the TLS listener (needs --tls-cert).",
            valueName: "file"))
    var clientCa: String?

    @Option(
        help: ArgumentHelp(
            "The APNs environment played: development (api.sandbox; answers carry apns-unique-id) or production (client certificates for it, no apns-unique-id).",
            valueName: "env"))
    var apnsEnvironment: String = ProviderCertificate.Environment.development.rawValue

    @Option(
        name: .customLong("extension"),
        help: ArgumentHelp("Run this command as the extension instead of the reference one.", valueName: "cmd"))
    var extensionCommand: String?

    @Option(help: "Seconds before serviceExtensionTimeWillExpire.")
    var budget: Double = 30

    @Option(
        help:
            "Peak memory allowed to each extension, in MB (default: its device's, 24 on iOS 15 and later; docs/media.md)."
    )
    var memoryLimit: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds an HTTP/2 connection with no open stream, or an HTTP/1.1 connection between requests, stays open.",
            valueName: "seconds"))
    var idleTimeout: Int = 3600

    @Option(
        help: ArgumentHelp(
            "Seconds a new connection has to send its first request bytes or HTTP/2 preface (TLS handshake included).",
            valueName: "seconds"))
    var prefaceTimeout: Int = 10

    @Option(
        help: ArgumentHelp(
            "SETTINGS_MAX_CONCURRENT_STREAMS advertised on HTTP/2 connections, 1 to 10000 (default 1000, as APNs); streams beyond it get RST_STREAM(REFUSED_STREAM).",
            valueName: "n"))
    var maxConcurrentStreams: Int = StreamSettings().maxConcurrentStreams

    @Flag(
        help:
            "After a 4xx or 5xx answer, lower the HTTP/2 connection's MAX_CONCURRENT_STREAMS to 1 until the next 200 or 5 s without a rejection, as providers report APNs does."
    )
    var throttleAfterRejection = false

    @Option(
        help: ArgumentHelp(
            "A scripted answer, repeatable, used in order: e.g. status=429,count=3 or token=HEX,status=410 or delay=2 or goaway or rst_stream or status=500,empty_body; for connections connect_delay=2,count=3 or settings_delay=1 or max_connections=2 (docs/serve.md).",
            valueName: "spec"))
    var fault: [String] = []

    @Option(
        help: ArgumentHelp(
            "Start unavailable: every push answered 503 with this reason (e.g. Shutdown) until DELETE /v1/control/unavailable.",
            valueName: "reason"))
    var unavailable: String?

    @Option(help: ArgumentHelp("Requests kept for GET /v1/requests (the oldest go first; 0: none).", valueName: "n"))
    var requestLog: Int = PushService.defaultRequestLogCapacity

    @Option(
        help: ArgumentHelp(
            "Deliver low-priority pushes (apns-priority 5 or 1) late and in bursts, every S seconds, as APNs may (default 0: at once).",
            valueName: "seconds"))
    var lowPriorityInterval: Double = 0

    @Option(
        help: ArgumentHelp(
            "Devices' result databases kept open at once; the least recently used is closed (default 512, fewer if the descriptor limit is low).",
            valueName: "n"))
    var openDatabases: Int?

    @Option(
        help: ArgumentHelp(
            "Write every push that runs as a replay case in this folder: the request, the device state, the extension's SIP exchange, the result as expect (docs/replay.md). Switched at run time by PUT /v1/control/recording.",
            valueName: "dir"))
    var record: String?

    @Flag(
        help:
            "Unsafe: keep plain-text message bodies the lock screen did not show in recorded cases (by default only their length is kept)."
    )
    var recordPlaintext = false

    @Option(
        help: ArgumentHelp(
            "Priority-10 Live Activity pushes an app's activities take per hour; past it they are throttled (0: no limit; an app with NSSupportsLiveActivitiesFrequentUpdates has none).",
            valueName: "n"))
    var liveActivityBudget: Int = LiveActivityDelivery.defaultBudget

    @Option(
        help: ArgumentHelp(
            "The broadcast channels' database (default: DIR/notifications/channels.db of the first --device, else .nse-channels.db in the first --devices folder).",
            valueName: "file"))
    var channels: String?

    @Option(
        help: ArgumentHelp("Broadcast channels an app may have (CannotCreateChannelConfig past it).", valueName: "n"))
    var channelLimit: Int = ChannelStore.defaultLimit

    @OptionGroup var processes: ExtensionProcessOptions

    @OptionGroup var providerKey: ServeProviderKeyOptions

    @Option(
        help: ArgumentHelp(
            "A fleet's PostgreSQL, postgres://USER[:PASSWORD]@HOST:PORT/DATABASE: the request log, push fault rules and results shared with the other nodes on it (docs/serve.md, \"A fleet on PostgreSQL\").",
            valueName: "url"))
    var database: String?

    @Option(
        help: ArgumentHelp(
            "This node's name in the fleet's request log and results (default: host name and --listen port).",
            valueName: "name"))
    var nodeName: String?

    @Option(help: "Connections to the fleet's PostgreSQL at most, 1 to 100 (default 8).")
    var databaseConnections: Int = FleetConnection.defaultMaxConnections

    @Option(
        help: ArgumentHelp(
            "Where the other nodes of the fleet send pushes for this node's devices: a cleartext host:port this node listens on (default: the --listen address, or --listen-h2c's with TLS; a wildcard host gives the host name).",
            valueName: "host:port"))
    var nodeAddress: String?

    @Option(
        help: ArgumentHelp(
            "Seconds a node of the fleet may go without its heartbeat before another node takes its devices over (default 3).",
            valueName: "seconds"))
    var nodeLease: Double = 3

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if clientCa != nil && tlsCert == nil { throw ValidationError("--client-ca needs --tls-cert and --tls-key") }
        guard ProviderCertificate.Environment(rawValue: apnsEnvironment) != nil else {
            throw ValidationError("--apns-environment \(apnsEnvironment): expected development or production")
        }
        guard !device.isEmpty || !devices.isEmpty else {
            throw ValidationError("give at least one --device DIR or --devices FOLDER")
        }
        guard concurrency > 0, concurrency <= 1024 else {
            throw ValidationError("--concurrency must be between 1 and 1024")
        }
        guard queue >= 0, queue <= 1_000_000 else { throw ValidationError("--queue must be between 0 and 1000000") }
        guard budget > 0, budget <= 3600 else {
            throw ValidationError(RunLimits.budget.requirement)
        }
        guard RunLimits.memoryLimit.accepts(memoryLimit ?? 24) else {
            throw ValidationError(RunLimits.memoryLimit.requirement)
        }
        guard idleTimeout >= 1, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be between 1 and 86400 seconds")
        }
        guard prefaceTimeout >= 1, prefaceTimeout <= 3600 else {
            throw ValidationError("--preface-timeout must be between 1 and 3600 seconds")
        }
        guard StreamSettings.maxConcurrentStreamsRange.contains(maxConcurrentStreams) else {
            throw ValidationError("--max-concurrent-streams must be between 1 and 10000")
        }
        guard lowPriorityInterval >= 0, lowPriorityInterval <= 3600 else {
            throw ValidationError("--low-priority-interval must be between 0 and 3600 seconds")
        }
        guard requestLog >= 0, requestLog <= 10_000_000 else {
            throw ValidationError("--request-log must be between 0 and 10000000")
        }
        guard (0...1_000_000).contains(liveActivityBudget) else {
            throw ValidationError("--live-activity-budget must be between 0 and 1000000")
        }
        guard (1...1_000_000).contains(channelLimit) else {
            throw ValidationError("--channel-limit must be between 1 and 1000000")
        }
        if let openDatabases, !(1...100_000).contains(openDatabases) {
            throw ValidationError("--open-databases must be between 1 and 100000")
        }
        guard (1...100).contains(databaseConnections) else {
            throw ValidationError("--database-connections must be between 1 and 100")
        }
        if database == nil,
            nodeName != nil || databaseConnections != FleetConnection.defaultMaxConnections || nodeAddress != nil
                || nodeLease != 3
        {
            throw ValidationError(
                "--node-name, --node-address, --node-lease and --database-connections go with --database")
        }
        guard nodeLease >= 1, nodeLease <= 3600 else {
            throw ValidationError("--node-lease must be between 1 and 3600")
        }
        if let nodeAddress { _ = try Self.parseAddress(nodeAddress, option: "--node-address") }
        if database != nil, tlsCert != nil, listenH2c == nil, nodeAddress == nil {
            throw ValidationError(
                "--database with --tls-cert needs --listen-h2c (or --node-address): the other nodes forward pushes in cleartext HTTP/2"
            )
        }
        if database != nil, channels != nil {
            throw ValidationError("--channels does not go with --database: a fleet keeps its channels in its database")
        }
        if let nodeName, nodeName.isEmpty || nodeName.count > 200 {
            throw ValidationError("--node-name must be 1 to 200 characters")
        }
        for spec in fault {
            do { _ = try FaultRule(spec: spec, now: 0) } catch { throw ValidationError(error.description) }
        }
        if let unavailable {
            guard FaultRule.isReasonWord(unavailable) else {
                throw ValidationError("--unavailable must be an APNs reason word, e.g. Shutdown")
            }
        }
        _ = try Self.parseAddress(listen, option: "--listen")
        if let listenH2c { _ = try Self.parseAddress(listenH2c, option: "--listen-h2c") }
    }

    /// `HOST:PORT` (IPv6 as `[::1]:PORT`).
    static func parseAddress(_ text: String, option: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ValidationError("\(option) \(text): expected host:port")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ValidationError("\(option) \(text): expected host:port") }
        return (host, port)
    }

    func run() async throws {
        var opened: [Device] = []
        for path in device {
            do { opened.append(try Device.open(at: path)) } catch { throw Failure(error).exit() }
        }
        // One info line per notification on stderr, unless NSE_LOG_LEVEL says otherwise.
        var logger = Logger(label: "nse.serve")
        if Environment.get("NSE_LOG_LEVEL") == nil { logger.logLevel = .info }
        var folder: [DeviceFolder.Entry] = []
        var folders: [(folder: String, devices: [String])] = []
        for path in devices {
            do {
                let (entries, problems) = try DeviceFolder.scan(path)
                for problem in problems {
                    logger.warning("device not served", metadata: ["device.problem": .string(problem)])
                }
                folder += entries
                folders.append((path, entries.map(\.directory)))
            } catch {
                throw Failure(error).exit()
            }
        }
        if device.isEmpty && folder.isEmpty {
            throw Failure(.config, "--devices \(devices.joined(separator: " ")): no device in it").exit()
        }
        let address = try Self.parseAddress(listen, option: "--listen")
        let fleet = try await openFleet(port: address.port, logger: logger)
        // Held until the server exits: a second server on these devices would run their pushes twice.
        let lock: ServeLock
        // A node asking for its devices back beats from then on, until the fleet runs: the node giving them waits
        // for their running pushes, and reading their unrun ones here may take longer than the lease; the others
        // would find it stopped meanwhile and try to take it over.
        var starting: Task<Void, Never>?
        do { lock = try ServeLock.acquire(devices: device, folders: folders) } catch {
            starting = fleet?.beatWhileStarting()
            lock = try await reclaim(error, fleet: fleet, folders: folders, logger: logger)
        }
        defer { withExtendedLifetime(lock) {} }
        let h2c = try listenH2c.map { try Self.parseAddress($0, option: "--listen-h2c") }
        if extensionCommand == nil, let problem = NotificationHost.referenceExtensionProblem() {
            throw Failure(.unavailable, "serve: \(problem)").exit()
        }
        let command =
            extensionCommand.map(NotificationHost.shellCommand) ?? NotificationHost.referenceExtensionCommand()
        var authentication: ProviderAuthentication?
        if !providerKey.keys.isEmpty {
            var verifiers: [ProviderTokenVerifier] = []
            for key in providerKey.keys {
                do {
                    verifiers.append(
                        try await ProviderTokenVerifier(keyFile: key.file, keyID: key.keyID, teamID: key.teamID))
                } catch {
                    throw Failure(.config, "--auth-key-file \(error.description)").exit()
                }
            }
            authentication = ProviderAuthentication(verifiers: verifiers)
        }
        let now = SystemClock.unixMilliseconds()
        let rules = try fault.map { spec in
            do { return try FaultRule(spec: spec, now: now) } catch { throw ValidationError("\(error)") }
        }
        // Three descriptors per open database, two pipes and more per running extension: the soft limit (often
        // 1024) is raised as far as the hard one allows, and the databases kept open fit what it gives.
        let wanted = openDatabases ?? ResultStore.defaultMaxOpen
        if recordPlaintext && record == nil { throw ValidationError("--record-plaintext needs --record DIR") }
        var recording: CaseRecording?
        if let record {
            do { recording = try CaseRecording(directory: record, plaintext: recordPlaintext) } catch {
                throw Failure(.config, "--record: \(error.description)").exit()
            }
        }
        let environment = ProviderCertificate.Environment(rawValue: apnsEnvironment) ?? .development
        var channelStore: ChannelStore?
        // In a fleet the channels are the fleet's (docs/serve.md): no file of this node's.
        if fleet == nil, let path = channels ?? ChannelStore.defaultPath(devices: opened, folder: folder) {
            do { channelStore = try ChannelStore(path: path, limit: channelLimit) } catch {
                throw Failure(.ioError, "--channels \(path): \(error)").exit()
            }
        }
        let descriptors = Processes.raiseDescriptorLimit(to: wanted * 4 + 4096)
        // This server's own registry, served at /metrics on its listeners (docs/serve.md, "Metrics").
        let registry = MetricsRegistry(
            valueHistogramBuckets: ServeMetrics.valueHistogramBuckets,
            durationHistogramBuckets: ServeMetrics.durationHistogramBuckets)
        let service = PushService(
            devices: opened, folder: folder, concurrency: concurrency, queueCapacity: queue, extensionCommand: command,
            limits: ExtensionLimits(budget: budget, memoryLimitKilobytes: memoryLimit.map { Int($0 * 1024) }),
            extensionProcesses: processes.pool(),
            forkServers: processes.forkServers { [logger] problem in
                logger.warning("extension processes exec'd", metadata: ["extension.problem": .string(problem)])
            },
            authentication: authentication,
            certificates: clientCa.map { _ in CertificateAuthentication(environment: environment) },
            environment: environment,
            // With a fleet, push rules and the switch are the fleet's (set below); connection rules stay this node's.
            faults: fleet == nil
                ? APNsFaultPlan(rules: rules, unavailable: unavailable)
                : APNsFaultPlan(rules: rules.filter { $0.connection != nil }),
            requestLogCapacity: requestLog, lowPriorityInterval: lowPriorityInterval,
            openDatabases: min(wanted, ResultStore.maxOpen(fitting: descriptors)), recording: recording,
            metrics: ServeMetrics(
                factory: registry.factory, contentType: MetricsRegistry.contentType, exposition: registry.exposition),
            liveActivityBudget: liveActivityBudget == 0 ? nil : liveActivityBudget, channels: channelStore,
            channelLimit: channelLimit, fleet: fleet, logger: logger)
        let configuration = PushServerConfiguration(
            host: address.host, port: address.port, h2cPort: h2c?.port, tlsCertificatePath: tlsCert, tlsKeyPath: tlsKey,
            timeouts: ConnectionTimeouts(preface: .seconds(prefaceTimeout), idle: .seconds(idleTimeout)),
            streams: StreamSettings(
                maxConcurrentStreams: maxConcurrentStreams, throttleAfterRejection: throttleAfterRejection),
            clientCAPath: clientCa)
        guard let fleet else {
            return try await serve(configuration, service: service, logger: logger)
        }
        // The pool and the results writer run while the node serves, and end after its last result is copied.
        async let running: Void = fleet.run { [service] in
            lock.release()
            service.releaseAdoptedLocks()
        }
        starting?.cancel()
        do {
            try await joinFleet(fleet, rules: rules.filter { $0.connection == nil })
            Self.adoptStoppedNodes(fleet, service: service, logger: logger)
            let tokens =
                opened.map { ($0.config.remoteToken, $0.config.voipToken) }
                + folder.map { ($0.remoteToken, $0.voipToken) }
            let served = (
                folders: devices.map { FileSystem.resolvedPath($0) ?? $0 },
                devices: device.map { FileSystem.resolvedPath($0) ?? $0 }
            )
            try await serve(configuration, service: service, logger: logger, stopping: fleet.stopping) {
                [logger, nodeAddress, tlsCert] urls in
                // The line says the node is ready: in the fleet, its devices claimed and its address known.
                let address = nodeAddress ?? Self.forwardingAddress(urls, tls: tlsCert != nil)
                do {
                    try await fleet.join(
                        address: address, folders: served.folders, devices: served.devices, tokens: tokens)
                } catch {
                    logger.error("node not joined to the fleet", metadata: ["fleet.error": .string("\(error)")])
                }
            }
        } catch {
            fleet.finish()
            await running
            throw error
        }
        fleet.finish()
        await running
    }

    /// Serves until stopped; the line with the listening URLs is printed once `ready` (a fleet's join) returns.
    private func serve(
        _ configuration: PushServerConfiguration, service: PushService, logger: Logger,
        stopping: @escaping @Sendable () -> Void = {},
        ready: @escaping @Sendable ([(String, String)]) async -> Void = { _ in }
    ) async throws {
        do {
            try await PushServer.run(configuration, service: service, logger: logger, onStopping: stopping) { urls in
                let line = JSON.object(JSONObject(urls.map { (key: $0.0, value: JSON.string($0.1)) }))
                Task {
                    await ready(urls)
                    StandardStreams.writeOut(line.serialized() + "\n")
                }
            }
        } catch {
            throw Failure(.ioError, "serve: \(error)").exit()
        }
    }

    /// `--database`: the fleet, connected and its schema up to date, or nil without it; a URL that does not parse
    /// or a database that cannot be used ends the command with one line (status 78), its password redacted.
    private func openFleet(port: Int, logger: Logger) async throws -> PostgresFleet? {
        guard let database else { return nil }
        do {
            let url = try FleetDatabaseURL(database)
            return try await PostgresFleet.open(
                url: url, node: nodeName ?? PostgresFleet.defaultNodeName(port: port),
                maxConnections: databaseConnections, lease: .milliseconds(Int64(nodeLease * 1000)), logger: logger)
        } catch {
            throw Failure(.config, "serve: \(error.description)").exit()
        }
    }

    /// Where the other nodes forward pushes: the cleartext listener's address (`--listen-h2c` beside a TLS
    /// `--listen`), a wildcard host replaced by the host name.
    static func forwardingAddress(_ urls: [(String, String)], tls: Bool) -> String {
        let url = urls.first(where: { $0.0 == (tls ? "h2c" : "listening") })?.1 ?? urls.first?.1 ?? ""
        var address = String(url.drop(while: { $0 != "/" }).dropFirst(2))
        for wildcard in ["0.0.0.0:", "[::]:"] where address.hasPrefix(wildcard) {
            let host = PostgresFleet.hostName
            address = host + ":" + address.dropFirst(wildcard.count)
        }
        return address
    }

    /// A stopped node's folders are served here: locked, indexed, their unrun pushes queued again. The locks are
    /// kept until the server exits, or gives the folders back to their node (``PushService/handBack(_:to:)``).
    private static func adoptStoppedNodes(_ fleet: PostgresFleet, service: PushService, logger: Logger) {
        fleet.adoptWith { folders, devices in
            do {
                let adoption = try await service.adopt(folders: folders, devices: devices) { tokens in
                    await fleet.copiedThrough(tokens)
                }
                if adoption.resumed > 0 {
                    logger.notice(
                        "running a stopped node's unrun pushes", metadata: ["push.count": "\(adoption.resumed)"])
                }
                return adoption.tokens
            } catch {
                logger.warning("stopped node's devices not taken over", metadata: ["fleet.error": .string("\(error)")])
                return nil
            }
        }
    }

    /// Another server holds these devices: in a fleet, a node that took them over while this one was stopped is
    /// asked to give them back (docs/serve.md, "Coming back"), and their locks are taken then; anything else ends
    /// the command as before (status 75), with why they did not come back.
    private func reclaim(
        _ busy: ServeLock.Busy, fleet: PostgresFleet?, folders: [(folder: String, devices: [String])], logger: Logger
    ) async throws -> ServeLock {
        guard let fleet else { throw Failure(.tempFail, "serve: \(busy.description)").exit() }
        do {
            let count = try await fleet.reclaim(
                folders: devices.map { FileSystem.resolvedPath($0) ?? $0 },
                devices: device.map { FileSystem.resolvedPath($0) ?? $0 })
            logger.notice("devices given back by the fleet", metadata: ["device.count": .stringConvertible(count)])
        } catch {
            throw Failure(.tempFail, "serve: \(busy.description) (\(error.description))").exit()
        }
        // Released before the answer came; a few tries all the same, for a holder whose descriptor closes late.
        var attempt = 0
        while true {
            do { return try ServeLock.acquire(devices: device, folders: folders) } catch {
                attempt += 1
                guard attempt < 20 else { throw Failure(.tempFail, "serve: \(error.description)").exit() }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Adds this node's `--fault` push rules and `--unavailable` to the fleet's.
    private func joinFleet(_ fleet: PostgresFleet, rules: [FaultRule]) async throws {
        do {
            if !rules.isEmpty { _ = try await fleet.addFaults(rules) }
            if let unavailable { try await fleet.setUnavailable(unavailable) }
        } catch {
            throw Failure(.config, "serve: \(error.description)").exit()
        }
    }
}
