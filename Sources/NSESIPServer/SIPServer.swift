public import NIOCore
import NIOPosix
import NIOSSL
public import Logging
public import NSESIP
import NSEHTTP
import NSECrypto
import NSESystem

/// A registrar + fork-late MESSAGE store-and-forward server with APNs pushes (Flexisip-like), for tests and the CLI.
public actor SIPServer {
    /// A MESSAGE's sender waiting for its final answer.
    private struct PendingSender {
        /// Where the sender's MESSAGE stands.
        enum Custody {
            /// Only forwarded to live bindings: if every copy fails, the sender hears the failure.
            case forwarded
            /// Stored for fork-late delivery: the sender hears 2xx from a device, or 202 at the accept timeout.
            case held
        }

        var request: SIPRequest
        var flow: ServerFlow
        var transactionKey: String
        var record: HeldMessage
        var custody: Custody
        /// Forwarded copies with no final answer yet.
        var outstanding: Int
        var timer: Task<Void, Never>?
    }

    private struct ClientTransaction {
        var branch: String
        var bytes: [UInt8]
        var flow: ServerFlow
        var heldID: String?
        var senderKey: String?
        var aor: String
        var callID: String
        var timer: Task<Void, Never>?
    }

    /// The configuration in use.
    public nonisolated let configuration: SIPServerConfiguration
    /// Everything the server reports (also kept in `eventLog()`); finishes on `shutdown()`.
    public nonisolated let events: AsyncStream<SIPServerEvent>
    private let eventsContinuation: AsyncStream<SIPServerEvent>.Continuation
    private let logger: Logger
    private let group: any EventLoopGroup
    private let ownsGroup: Bool
    private let inbound: AsyncStream<InboundEvent>
    private let inboundContinuation: AsyncStream<InboundEvent>.Continuation

    /// Where the server is in its life: `start()` moves it from `created` to `running`, `shutdown()` to `stopped`.
    private enum Phase {
        case created
        case starting
        /// `tasks` is the one parent of the inbound loop, the sweeper and every push or delayed request.
        case running(tasks: Task<Void, Never>)
        case stopped
    }

    private var phase = Phase.created
    /// Work the running server adds to its task group (pushes, delayed requests); finished by `shutdown()`.
    private let jobs: AsyncStream<@Sendable () async -> Void>
    private let jobsContinuation: AsyncStream<@Sendable () async -> Void>.Continuation
    private var faults: FaultPlan
    private let pushSender: PushSender
    private var listenerChannels: [any Channel] = []
    private var boundAddresses: [SIPServerBoundAddress] = []
    private var streamFlows: [String: ServerFlow] = [:]

    /// The durable copy of the registrar's bindings and the held messages (nil without a database directory:
    /// memory only).
    private var database: ServerDatabase? = nil
    private var registrar: Registrar
    private var held: HeldStore
    private var senderForHeld: [String: String] = [:]
    private var pendingSenders: [String: PendingSender] = [:]
    private var clientTransactions: [String: ClientTransaction] = [:]
    private var serverTransactions: SIPServerTransactionTable
    private var log: [SIPServerEvent] = []

    /// Creates a server; without a group it owns a one-thread event loop group, released by `shutdown()`.
    public init(configuration: SIPServerConfiguration, eventLoopGroup: (any EventLoopGroup)? = nil,
                logger: Logger = Logger(label: "nse.sipserver")) {
        self.configuration = configuration
        self.logger = logger
        if let eventLoopGroup {
            group = eventLoopGroup
            ownsGroup = false
        } else {
            group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            ownsGroup = true
        }
        (events, eventsContinuation) = AsyncStream<SIPServerEvent>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        (inbound, inboundContinuation) = AsyncStream<InboundEvent>.makeStream(bufferingPolicy: .unbounded)
        (jobs, jobsContinuation) = AsyncStream<@Sendable () async -> Void>.makeStream(bufferingPolicy: .unbounded)
        serverTransactions = SIPServerTransactionTable(lifetime: configuration.timers.timerF)
        faults = FaultPlan(configuration.faults)
        registrar = Registrar(configuration: configuration)
        held = HeldStore(database: nil, logger: logger)
        pushSender = PushSender(settings: configuration.push)
    }

    // MARK: - lifecycle

    /// Loads users and held messages, binds every listener and returns the bound addresses (actual ports).
    public func start() async throws -> [SIPServerBoundAddress] {
        switch phase {
        case .created: phase = .starting
        case .starting, .running: return boundAddresses
        case .stopped: throw SIPServerError("server was shut down")
        }
        do {
            var loaded: [String: String]? = configuration.users
            if let path = configuration.usersFile {
                let fromFile = try SIPServerConfiguration.loadUsers(path: path)
                loaded = (loaded ?? [:]).merging(fromFile) { _, new in new }
            }
            registrar.setUsers(loaded)
            if let directory = configuration.databaseDirectory {
                try openDatabase(directory: directory)
            }
            let tlsContext = try configuration.tls.map { try ListenerFactory.makeTLSContext($0) }
            for listener in configuration.listeners {
                let channel = try await ListenerFactory.bind(listener, group: group, tls: tlsContext, limits: configuration.limits,
                                                             sink: inboundContinuation, logger: logger)
                listenerChannels.append(channel)
                let address = channel.localAddress
                boundAddresses.append(SIPServerBoundAddress(transport: listener.transport,
                                                            host: address?.ipAddress ?? listener.host,
                                                            port: address?.port ?? listener.port))
            }
            try restoreBindings()
        } catch {
            await shutdown()
            throw error
        }
        guard case .starting = phase else {
            // `shutdown()` ran while the listeners were being bound: close what it could not see.
            for channel in listenerChannels { try? await channel.close().get() }
            listenerChannels = []
            throw SIPServerError("server was shut down")
        }
        phase = .running(tasks: Task { await self.runTasks() })
        sweep()
        logger.info("sip server started", metadata: ["sip.listeners": "\(boundAddresses.map(\.description))"])
        return boundAddresses
    }

    /// Closes listeners and connections, cancels timers and pushes, finishes `events`; idempotent.
    public func shutdown() async {
        let tasks: Task<Void, Never>?
        switch phase {
        case .stopped: return
        case .running(let running): tasks = running
        case .created, .starting: tasks = nil
        }
        phase = .stopped
        jobsContinuation.finish()
        tasks?.cancel()
        for (_, pending) in pendingSenders { pending.timer?.cancel() }
        pendingSenders = [:]
        for (_, tx) in clientTransactions { tx.timer?.cancel() }
        clientTransactions = [:]
        let channels = listenerChannels
        listenerChannels = []
        for channel in channels { try? await channel.close().get() }
        let flows = streamFlows
        streamFlows = [:]
        for (_, flow) in flows { try? await flow.channel.close().get() }
        inboundContinuation.finish()
        await tasks?.value
        eventsContinuation.finish()
        if ownsGroup { try? await group.shutdownGracefully() }
        logger.info("sip server stopped")
    }

    // MARK: - durable state

    /// Opens the database in `directory` (importing files of the old one-file-per-message layout once) and loads
    /// the held messages.
    private func openDatabase(directory: String) throws(SIPServerError) {
        let database = try ServerDatabase(directory: directory)
        self.database = database
        let migration = try database.importLegacyFiles(in: directory)
        if !migration.unreadable.isEmpty {
            logger.warning("sip server moved unreadable held message files aside", metadata: [
                "sip.files": "\(migration.unreadable.sorted().joined(separator: ","))",
                "sip.folder": "\(Path.join(directory, ServerDatabase.unreadableFolder))",
            ])
        }
        if migration.imported > 0 {
            logger.info("sip server imported held message files into its database", metadata: ["sip.count": "\(migration.imported)"])
        }
        held = HeldStore(database: database, logger: logger)
        let messages = try held.load()
        for message in messages { registrar.noteKnown(message.aor) }
        if !messages.isEmpty {
            logger.info("sip server loaded held messages", metadata: [
                "sip.count": "\(messages.count)", "sip.undelivered": "\(messages.filter { !$0.isDelivered }.count)",
            ])
        }
    }

    /// Brings back the bindings that have not expired, with their remaining lifetime. A UDP binding whose listener
    /// port is bound again is live at once; a TCP/TLS one waits for the device to reconnect (pushes still go out).
    private func restoreBindings() throws(SIPServerError) {
        guard let database else { return }
        let wallNow = Clock.unixSeconds()
        let (stored, expiredAORs) = try database.liveBindings(now: wallNow)
        let restored = registrar.restore(stored, expiredAORs: expiredAORs, wallNow: wallNow, logger: logger) { udpFlow($0) }
        if restored > 0 { logger.info("sip server restored bindings", metadata: ["sip.count": "\(restored)"]) }
    }

    /// The UDP path to a device through the listener bound on the port its REGISTER came in on, if that port is
    /// bound again.
    private func udpFlow(_ route: Registrar.Binding.Route) -> ServerFlow? {
        guard let index = boundAddresses.firstIndex(where: { $0.transport == .udp && $0.port == route.localPort }),
              let remote = try? SocketAddress(ipAddress: route.remoteHost, port: route.remotePort) else { return nil }
        let channel = listenerChannels[index]
        return ServerFlow(kind: .udp, channel: channel, remote: remote, local: channel.localAddress)
    }

    /// The addresses bound by `start()`.
    public var addresses: [SIPServerBoundAddress] { boundAddresses }

    /// Every event so far, oldest first.
    public func eventLog() -> [SIPServerEvent] { log }

    /// Held messages not yet delivered (Call-IDs, oldest first), optionally for one AOR (`sip:user@host`).
    public func undeliveredCallIDs(aor: String? = nil) -> [String] {
        held.waiting(aor: aor.map { SIPServer.aorKey($0) }).map(\.callID)
    }

    /// Number of live bindings of an AOR (`sip:user@host`).
    public func bindingCount(aor: String) -> Int {
        registrar.activeBindings(aor: SIPServer.aorKey(aor)).count
    }

    /// The normalized AOR key of a URI: `sip:user@host` (scheme sip, host lowercased, no port or parameters).
    public static func aorKey(_ uri: SIPURI) -> String {
        let host = PushParameters.lower(uri.host)
        if let user = uri.user { return "sip:\(user)@\(host)" }
        return "sip:\(host)"
    }

    /// `aorKey` of a URI string (returned unchanged when it does not parse).
    public static func aorKey(_ text: String) -> String {
        (try? SIPURI(parsing: text)).map { aorKey($0) } ?? text
    }

    // MARK: - events and tasks

    private func emit(_ event: SIPServerEvent) {
        log.append(event)
        if log.count > 10_000 { log.removeFirst(log.count - 10_000) }
        eventsContinuation.yield(event)
    }

    /// The server's one task tree: the inbound loop, the expiry sweeper, and a child per job (push, delayed
    /// request). Returns once `shutdown()` has finished the job stream and cancelled the tree.
    private nonisolated func runTasks() async {
        let inbound = self.inbound
        let jobs = self.jobs
        let interval = configuration.expirySweepInterval
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in inbound { await self.process(event) }
            }
            group.addTask {
                while true {
                    do { try await Task.sleep(for: interval) } catch { return }
                    await self.sweep()
                }
            }
            for await job in jobs {
                group.addTask { await job() }
            }
            group.cancelAll()
        }
    }

    /// Runs `body` as a child of the server's task tree (dropped once the server stops).
    private func spawn(_ body: @escaping @Sendable () async -> Void) {
        guard case .running = phase else { return }
        jobsContinuation.yield(body)
    }

    private var isStopped: Bool {
        if case .stopped = phase { return true }
        return false
    }


    // MARK: - inbound dispatch

    private func process(_ event: InboundEvent) async {
        guard !isStopped else { return }
        switch event {
        case .opened(let flow):
            streamFlows[flow.key] = flow
        case .closed(let flow):
            streamFlows[flow.key] = nil
        case .datagram(let message, let flow):
            if faults.dropsDatagram() {
                logger.debug("sip server dropping datagram (fault knob)", metadata: ["sip.count": "\(faults.datagramCount)"])
                return
            }
            if let message { await dispatch(message, flow: flow) }
        case .message(let message, let flow):
            await dispatch(message, flow: flow)
        }
    }

    private func dispatch(_ message: SIPMessage, flow: ServerFlow) async {
        switch message {
        case .response(let response):
            handleResponse(response)
        case .request(let request):
            if request.method.uppercased() == "ACK" { return }
            var log = logger
            // A Call-ID with control characters is refused below; it is never logged.
            if request.headers.firstInvalidField == nil {
                log[metadataKey: "sip.call_id"] = "\(request.headers.callID ?? "")"
            }
            log[metadataKey: "sip.method"] = "\(request.method)"
            let key: String
            switch serverTransactions.receive(request) {
            case .retransmission(let stored):
                log.debug("sip server absorbed retransmission")
                if let stored { flow.send(stored) }
                return
            case .new(let k):
                key = k
            }
            switch faults.arrival(of: request) {
            case .handle:
                handleRequest(request, flow: flow, transactionKey: key)
            case .ignore:
                log.debug("sip server ignoring request (neverAnswer)")
            case .delay(let delay):
                spawn { [weak self] in
                    do { try await Task.sleep(for: delay) } catch { return }
                    await self?.handleRequest(request, flow: flow, transactionKey: key)
                }
            }
        }
    }

    private func handleRequest(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard !isStopped else { return }
        let method = request.method.uppercased()
        // RFC 3261's grammar allows no control characters in header values (folding is undone by the parser).
        // Such a value would reach the device in a forwarded MESSAGE and break whatever reads it there, so the
        // request is refused; the reason names the header, never its value.
        if let field = request.headers.firstInvalidField {
            logger.info("sip server refused a request with a control character in a header", metadata: [
                "sip.method": "\(method)", "sip.header": "\(field)",
            ])
            respond(request, flow: flow, transactionKey: transactionKey, status: 400,
                    reason: SIPServer.invalidHeaderReason(field))
            return
        }
        guard request.headers.callID != nil, request.headers.cseq != nil, request.headers.topVia != nil,
              request.headers.from != nil, request.headers.to != nil else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 400)
            return
        }
        switch faults.answer(for: method, over: flow.kind) {
        case nil:
            break
        case .closeConnection:
            logger.debug("sip server closing connection after REGISTER (fault knob)", metadata: ["sip.method": "REGISTER"])
            flow.close()
            return
        case .serviceUnavailable:
            respond(request, flow: flow, transactionKey: transactionKey, status: 503,
                    extraHeaders: [("Retry-After", "5")])
            return
        case .challenge:
            let realm = configuration.realm ?? request.headers.to?.uri.host ?? "nse"
            respond(request, flow: flow, transactionKey: transactionKey, status: 401,
                    extraHeaders: registrar.challengeHeaders(realm: realm, stale: false))
            return
        }
        switch method {
        case "REGISTER": handleRegister(request, flow: flow, transactionKey: transactionKey)
        case "MESSAGE": handleMessage(request, flow: flow, transactionKey: transactionKey)
        case "OPTIONS": respond(request, flow: flow, transactionKey: transactionKey, status: 200,
                                extraHeaders: [("Allow", "REGISTER, MESSAGE, OPTIONS")])
        default: respond(request, flow: flow, transactionKey: transactionKey, status: 501,
                         extraHeaders: [("Allow", "REGISTER, MESSAGE, OPTIONS")])
        }
    }

    /// Sends a final (or provisional) response on the request's flow and remembers it for retransmissions.
    private func respond(_ request: SIPRequest, flow: ServerFlow, transactionKey: String, status: Int, reason: String? = nil,
                         extraHeaders: [(String, String)] = [], contacts: [String] = []) {
        var response = request.makeResponse(statusCode: status, reasonPhrase: reason,
                                            toTag: status == 100 ? nil : SIPServer.toTag(for: request))
        // RFC 3581: tell the client where its request came from.
        let vias = request.headers.splitValues("Via")
        if var top = vias.first.flatMap({ try? SIPVia(parsing: $0) }) {
            top.parameters.set("received", flow.remoteHost)
            if top.hasRport { top.parameters.set("rport", String(flow.remotePort)) }
            response.headers.remove("Via")
            var all = [top.description]
            all.append(contentsOf: vias.dropFirst())
            for v in all.reversed() { response.headers.prepend("Via", v) }
        }
        for c in contacts { response.headers.add("Contact", c) }
        for (name, value) in extraHeaders { response.headers.add(name, value) }
        if let server = configuration.serverHeader { response.headers.add("Server", server) }
        let bytes = response.serialized()
        if status >= 200 { serverTransactions.store(response: bytes, for: transactionKey) }
        flow.send(bytes)
        if status >= 200 {
            // A refused Call-ID with control characters is not repeated in events either.
            let callID = request.headers.firstInvalidField == nil ? request.headers.callID ?? "" : ""
            emit(.answered(method: request.method.uppercased(), callID: callID, status: status))
        }
    }

    /// `Invalid NAME Header`, or `Invalid Header` when the name has characters a reason phrase cannot carry as is.
    static func invalidHeaderReason(_ name: String) -> String {
        let plain = !name.isEmpty && name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x2E || b == 0x5F
        }
        return plain ? "Invalid \(name) Header" : "Invalid Header"
    }

    /// A stable To tag per transaction so retransmitted answers match.
    private static func toTag(for request: SIPRequest) -> String {
        var h: UInt64 = 0xcbf29ce484222325
        for b in (request.headers.callID ?? "").utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        for b in (request.headers.from?.tag ?? "").utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }
        return String(h, radix: 16)
    }

    // MARK: - registrar

    private func handleRegister(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard let to = request.headers.to else {
            respond(request, flow: flow, transactionKey: transactionKey, status: 400)
            return
        }
        let aor = SIPServer.aorKey(to.uri)
        var log = logger
        log[metadataKey: "sip.call_id"] = "\(request.headers.callID ?? "")"
        log[metadataKey: "sip.method"] = "REGISTER"
        log[metadataKey: "sip.aor"] = "\(aor)"
        if let denial = registrar.authorize(request, aorURI: to.uri) {
            log.debug("sip server register not authorized", metadata: ["sip.status": "\(denial.status)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: denial.status, extraHeaders: denial.headers)
            return
        }
        switch registrar.register(request, aor: aor, flow: flow, database: database, logger: log) {
        case .refused(let status, let reason):
            respond(request, flow: flow, transactionKey: transactionKey, status: status, reason: reason)
        case .stored(let changes, let contacts, let deliveryContact):
            for change in changes { emit(change) }
            respond(request, flow: flow, transactionKey: transactionKey, status: 200, contacts: contacts)
            if let deliveryContact { deliverHeld(aor: aor, flow: flow, contactURI: deliveryContact) }
        }
    }

    // MARK: - MESSAGE store-and-forward

    private static let droppedHeaders: Set<String> = [
        "via", "route", "record-route", "max-forwards", "cseq", "content-length", "authorization",
        "proxy-authorization", "proxy-require", "contact", "path",
    ]

    private func handleMessage(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        let aor = SIPServer.aorKey(request.uri)
        let callID = request.headers.callID ?? ""
        var log = logger
        log[metadataKey: "sip.call_id"] = "\(callID)"
        log[metadataKey: "sip.method"] = "MESSAGE"
        log[metadataKey: "sip.aor"] = "\(aor)"
        let active = registrar.activeBindings(aor: aor)
        guard !active.isEmpty else {
            let known = registrar.isKnown(aor: aor, user: request.uri.user)
            log.debug("sip server message for unreachable aor", metadata: ["sip.known": "\(known)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: known ? 480 : 404)
            return
        }
        var headers: [(String, String)] = []
        for field in request.headers where !SIPServer.droppedHeaders.contains(PushParameters.lower(field.name)) {
            headers.append((field.name, field.value))
        }
        let id: String
        do { id = try SecureRandom.hex(16) } catch {
            log.error("sip server has no secure randomness for a held message id", metadata: ["sip.error": "\(error)"])
            respond(request, flow: flow, transactionKey: transactionKey, status: 500)
            return
        }
        let wallNow = Clock.unixSeconds()
        let record = HeldMessage(id: id, aor: aor, callID: callID, headers: headers, body: request.body,
                                 receivedAt: wallNow, expiresAt: wallNow + Int64(configuration.heldMessageLifetime),
                                 order: held.nextOrder())
        let hasPush = active.contains { $0.push != nil }
        let live = active.compactMap { $0.isLive ? $0.flow : nil }
        let mustHold = hasPush || live.isEmpty
        if mustHold {
            do {
                try hold(record)
            } catch {
                log.error("sip server cannot persist held message", metadata: ["sip.error": "\(error)"])
                respond(request, flow: flow, transactionKey: transactionKey, status: 500, reason: "Message Not Stored")
                return
            }
        }
        let senderKey = transactionKey
        var pending = PendingSender(request: request, flow: flow, transactionKey: transactionKey, record: record,
                                    custody: mustHold ? .held : .forwarded, outstanding: 0)
        if mustHold { senderForHeld[record.id] = senderKey }
        let timeout = configuration.messageAcceptTimeout
        pending.timer = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            await self?.acceptTimeoutFired(senderKey)
        }
        pendingSenders[senderKey] = pending
        for binding in active {
            guard let liveFlow = binding.flow, liveFlow.isLive else { continue }
            pendingSenders[senderKey]?.outstanding += 1
            sendCopy(record, flow: liveFlow, contactURI: binding.contact.uri, heldID: mustHold ? record.id : nil,
                     senderKey: senderKey, copies: 1)
        }
        if mustHold {
            let imdn = APNsMessagePush.isIMDN(contentType: request.headers.contentType, body: request.body)
            if imdn {
                log.debug("sip server not pushing an IMDN")
            } else {
                for binding in active where binding.push != nil {
                    schedulePush(record: record, request: request, binding: binding)
                }
            }
        }
    }

    /// Stores a message for later delivery; it counts as held (and its sender may hear 202) only once stored.
    private func hold(_ record: HeldMessage) throws(SIPServerError) {
        try held.hold(record)
        registrar.noteKnown(record.aor)
        emit(.held(aor: record.aor, callID: record.callID, id: record.id))
        logger.info("sip server message held", metadata: [
            "sip.call_id": "\(record.callID)", "sip.method": "MESSAGE", "sip.aor": "\(record.aor)",
            "sip.body_size": "\(record.body.count)",
        ])
    }

    private func acceptTimeoutFired(_ senderKey: String) {
        guard var pending = pendingSenders[senderKey] else { return }
        if pending.custody == .forwarded {
            // Fork-late: the live forward has not answered yet; keep the message for the next REGISTER.
            do {
                try hold(pending.record)
                pending.custody = .held
                senderForHeld[pending.record.id] = senderKey
                // Outstanding forwards of this record now count as deliveries of the held message.
                for (branch, tx) in clientTransactions where tx.senderKey == senderKey {
                    clientTransactions[branch]?.heldID = pending.record.id
                }
            } catch {
                logger.error("sip server cannot persist held message", metadata: ["sip.error": "\(error)"])
                answerSender(senderKey, status: 500, reason: "Message Not Stored")
                return
            }
            pendingSenders[senderKey] = pending
        }
        answerSender(senderKey, status: 202)
    }

    private func answerSender(_ senderKey: String, status: Int, reason: String? = nil) {
        guard let pending = pendingSenders.removeValue(forKey: senderKey) else { return }
        pending.timer?.cancel()
        if senderForHeld[pending.record.id] == senderKey { senderForHeld[pending.record.id] = nil }
        respond(pending.request, flow: pending.flow, transactionKey: pending.transactionKey, status: status, reason: reason)
    }

    /// Delivers every undelivered held message of `aor` over the REGISTER's flow.
    private func deliverHeld(aor: String, flow: ServerFlow, contactURI: SIPURI) {
        let wallNow = Clock.unixSeconds()
        let waiting = held.waiting(aor: aor, now: wallNow)
        guard !waiting.isEmpty else { return }
        let plan = faults.delivery(aor: aor, host: contactURI.host, now: wallNow) { held.nextOrder() }
        if let unrelated = plan.unrelated {
            sendCopy(unrelated, flow: flow, contactURI: contactURI, heldID: nil, senderKey: nil, copies: 1)
        }
        for message in waiting {
            let inFlight = clientTransactions.values.contains { $0.heldID == message.id && $0.flow.key == flow.key }
            if inFlight { continue }
            sendCopy(message, flow: flow, contactURI: contactURI, heldID: message.id, senderKey: nil, copies: plan.copies)
        }
    }

    /// Sends one MESSAGE as a client transaction (retransmitted on UDP until Timer F); `copies` above 1 sends the
    /// same bytes again at once, as a retransmission would.
    private func sendCopy(_ record: HeldMessage, flow: ServerFlow, contactURI: SIPURI, heldID: String?, senderKey: String?,
                          copies: Int) {
        let attempt = heldID.flatMap { held.recordAttempt(id: $0) } ?? 1
        let branch = SIPIdentifiers.branch()
        var request = SIPRequest(method: "MESSAGE", uri: contactURI, body: record.body)
        request.headers.add("Via", SIPVia(transport: flow.kind.viaToken, host: flow.localHost, port: flow.localPort,
                                          parameters: [SIPParameter("branch", branch)]).description)
        request.headers.add("Max-Forwards", "70")
        for (name, value) in record.headers { request.headers.add(name, value) }
        request.headers.add("CSeq", SIPCSeq(sequence: UInt32(attempt), method: "MESSAGE").description)
        let bytes = request.serialized()
        var tx = ClientTransaction(branch: branch, bytes: bytes, flow: flow, heldID: heldID, senderKey: senderKey,
                                   aor: record.aor, callID: record.callID)
        let timers = configuration.timers
        let reliable = flow.kind != .udp
        tx.timer = Task { [weak self] in
            let clock = ContinuousClock()
            let deadline = clock.now + timers.timerF
            var interval = timers.t1
            while !Task.isCancelled {
                let wake = reliable ? deadline : min(clock.now + interval, deadline)
                do { try await clock.sleep(until: wake) } catch { return }
                guard let self else { return }
                if clock.now >= deadline {
                    await self.clientTransactionFinished(branch: branch, status: 408)
                    return
                }
                guard await self.retransmit(branch: branch) else { return }
                interval = min(interval * 2, timers.t2)
            }
        }
        clientTransactions[branch] = tx
        for _ in 0..<max(1, copies) {
            flow.send(bytes)
            emit(.forwarded(aor: record.aor, callID: record.callID, transport: flow.kind, attempt: attempt))
        }
        logger.debug("sip server message sent to device", metadata: [
            "sip.call_id": "\(record.callID)", "sip.method": "MESSAGE", "sip.aor": "\(record.aor)",
            "sip.transport": "\(flow.kind.rawValue)", "sip.duplicate": "\(copies > 1)",
        ])
    }

    private func retransmit(branch: String) -> Bool {
        guard let tx = clientTransactions[branch] else { return false }
        guard tx.flow.isLive else {
            clientTransactionFinished(branch: branch, status: 503)
            return false
        }
        tx.flow.send(tx.bytes)
        return true
    }

    private func handleResponse(_ response: SIPResponse) {
        guard let branch = response.headers.topVia?.branch, clientTransactions[branch] != nil else {
            // The Call-ID only when it is clean: a response is not refused like a request, but never quoted raw.
            let callID = response.headers.firstInvalidField == nil ? response.headers.callID ?? "" : "(invalid)"
            logger.debug("sip server dropping response matching no transaction", metadata: [
                "sip.call_id": "\(callID)", "sip.status": "\(response.statusCode)",
            ])
            return
        }
        if response.isProvisional { return }
        clientTransactionFinished(branch: branch, status: response.statusCode)
    }

    private func clientTransactionFinished(branch: String, status: Int) {
        guard let tx = clientTransactions.removeValue(forKey: branch) else { return }
        tx.timer?.cancel()
        let success = (200..<300).contains(status)
        logger.debug("sip server device answered", metadata: [
            "sip.call_id": "\(tx.callID)", "sip.method": "MESSAGE", "sip.aor": "\(tx.aor)", "sip.status": "\(status)",
        ])
        if success, let heldID = tx.heldID, let message = held.markDelivered(id: heldID) {
            emit(.delivered(aor: message.aor, callID: message.callID, id: message.id))
            if let senderKey = senderForHeld[heldID] { answerSender(senderKey, status: 200) }
        }
        guard let senderKey = tx.senderKey, var pending = pendingSenders[senderKey] else { return }
        if success {
            answerSender(senderKey, status: status)
            return
        }
        pending.outstanding -= 1
        pendingSenders[senderKey] = pending
        if pending.outstanding <= 0, pending.custody == .forwarded {
            answerSender(senderKey, status: status >= 300 ? status : 480)
        }
    }

    // MARK: - pushes

    private func schedulePush(record: HeldMessage, request: SIPRequest, binding: Registrar.Binding) {
        guard let push = binding.push,
              let plan = pushSender.plan(record: record, request: request, push: push, instance: binding.instance) else { return }
        switch plan {
        case .skipped(let outcome):
            emit(.pushed(aor: outcome.aor, callID: outcome.callID, url: outcome.url, status: outcome.status,
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
        logger.log(level: level, "sip server push sent", metadata: [
            "sip.call_id": "\(callID)", "sip.aor": "\(aor)", "push.status": "\(status.map(String.init) ?? "none")",
            "push.reason": "\(reason)",
        ])
    }

    // MARK: - expiry

    private func sweep() {
        guard !isStopped else { return }
        let wallNow = Clock.unixSeconds()
        for message in held.sweep(now: wallNow) {
            emit(.expired(aor: message.aor, callID: message.callID, id: message.id))
            logger.info("sip server held message expired", metadata: [
                "sip.call_id": "\(message.callID)", "sip.method": "MESSAGE", "sip.aor": "\(message.aor)",
            ])
        }
        for event in registrar.sweep() { emit(event) }
    }
}
