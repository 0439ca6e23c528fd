public import NSEHTTP
public import NSESIP
import NSESystem

/// Settings of a `SIPServer` (registrar + fork-late MESSAGE store-and-forward + APNs pushes).
public struct SIPServerConfiguration: Sendable {
    /// One listening socket.
    public struct Listener: Sendable, Hashable, CustomStringConvertible {
        /// `udp`, `tcp` or `tls`.
        public var transport: SIPTransportKind
        /// Address to bind, e.g. `127.0.0.1` or `::`.
        public var host: String
        /// Port to bind; 0 picks an ephemeral port (see `SIPServer.start()`'s result).
        public var port: Int

        /// Creates a listener description.
        public init(transport: SIPTransportKind, host: String = "127.0.0.1", port: Int = 0) {
            self.transport = transport
            self.host = host
            self.port = port
        }

        /// `transport:host:port`.
        public var description: String {
            let h = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
            return "\(transport.rawValue):\(h):\(port)"
        }
    }

    /// PEM files for the TLS listeners.
    public struct TLSFiles: Sendable, Hashable {
        /// Certificate chain (PEM).
        public var certificatePath: String
        /// Private key (PEM).
        public var keyPath: String

        /// Creates TLS file settings.
        public init(certificatePath: String, keyPath: String) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
        }
    }

    /// APNs push settings.
    public struct Push: Sendable {
        /// Base URL for `pn-provider=apns` (production).
        public var apnsURL: String
        /// Base URL for `pn-provider=apns.dev` (sandbox).
        public var apnsDevelopmentURL: String
        /// `apns-expiration` = now + ttl, and `pn_ttl` in the payload (seconds).
        public var ttl: Int
        /// TLS settings (client certificate, CA) for the APNs connection.
        public var tls: HTTPTLSOptions
        /// Whole-request timeout in seconds.
        public var timeout: Double
        /// Connect timeout in seconds.
        public var connectTimeout: Double
        /// Set false to never send pushes (held messages are still kept).
        public var enabled: Bool
        /// Token-based APNs authentication: gives the current provider token (JWT) for `authorization: bearer`.
        public var providerToken: (@Sendable () async -> String?)?

        /// Creates push settings (Apple's endpoints by default).
        public init(
            apnsURL: String = "https://api.push.apple.com",
            apnsDevelopmentURL: String = "https://api.sandbox.push.apple.com",
            ttl: Int = 2_592_000, tls: HTTPTLSOptions = HTTPTLSOptions(), timeout: Double = 10,
            connectTimeout: Double = 5, enabled: Bool = true
        ) {
            self.apnsURL = apnsURL
            self.apnsDevelopmentURL = apnsDevelopmentURL
            self.ttl = ttl
            self.tls = tls
            self.timeout = timeout
            self.connectTimeout = connectTimeout
            self.enabled = enabled
        }
    }

    /// Misbehaviours for testing clients.
    public struct Faults: Sendable, Hashable {
        /// Wait this long before handling each received request (answering or forwarding).
        public var delayMilliseconds: Int
        /// UDP: ignore the first N datagrams received (keep-alives not counted).
        public var dropFirstPackets: Int
        /// Answer every request with a fresh 401 challenge, forever.
        public var alwaysChallenge: Bool
        /// Answer every request with 503 Service Unavailable.
        public var answer503: Bool
        /// Close the TCP/TLS connection right after receiving a REGISTER, without answering.
        public var resetConnectionAfterRegister: Bool
        /// Send each held MESSAGE twice on REGISTER (same Call-ID and branch: a retransmission).
        public var deliverDuplicates: Bool
        /// On REGISTER, deliver one MESSAGE with a fresh random Call-ID before the held ones.
        public var unrelatedCallIDFirst: Bool
        /// Never answer any request.
        public var neverAnswer: Bool

        /// Creates fault settings (all off by default).
        public init(
            delayMilliseconds: Int = 0, dropFirstPackets: Int = 0, alwaysChallenge: Bool = false,
            answer503: Bool = false, resetConnectionAfterRegister: Bool = false, deliverDuplicates: Bool = false,
            unrelatedCallIDFirst: Bool = false, neverAnswer: Bool = false
        ) {
            self.delayMilliseconds = delayMilliseconds
            self.dropFirstPackets = dropFirstPackets
            self.alwaysChallenge = alwaysChallenge
            self.answer503 = answer503
            self.resetConnectionAfterRegister = resetConnectionAfterRegister
            self.deliverDuplicates = deliverDuplicates
            self.unrelatedCallIDFirst = unrelatedCallIDFirst
            self.neverAnswer = neverAnswer
        }
    }

    /// Listening sockets.
    public var listeners: [Listener]
    /// Certificate and key for `tls` listeners (required when one is configured).
    public var tls: TLSFiles?
    /// Size limits for received messages (UDP datagrams and stream framing).
    public var limits: SIPParserLimits
    /// Directory of the server's database, `sip-server.db` (bindings and held messages, kept across restarts; files of
    /// the old one-JSON-file-per-message layout found there are imported once); nil keeps everything in memory only.
    public var databaseDirectory: String?
    /// Users file (`username password` per line, `#` comments); enables digest auth on REGISTER.
    public var usersFile: String?
    /// Users given inline (merged with `usersFile`); non-nil enables digest auth on REGISTER.
    public var users: [String: String]?
    /// Digest realm; nil uses the AOR's domain.
    public var realm: String?
    /// Algorithms offered in 401 challenges (one WWW-Authenticate each, first preferred).
    public var authAlgorithms: [DigestAlgorithm]
    /// How long a nonce stays valid, in seconds.
    public var nonceLifetime: Int
    /// Answer `202 Accepted` to a held MESSAGE's sender after this delay unless delivered first (Flexisip message-accept-timeout).
    public var messageAcceptTimeout: Duration
    /// Held messages expire after this many seconds (Flexisip message-delivery-timeout).
    public var heldMessageLifetime: Int
    /// How long a call waits for a device's final answer before the caller hears 408 (Flexisip call-fork-timeout).
    public var callForkTimeout: Duration
    /// How often a held call's alert-form push is sent again while the call waits for the device (Flexisip's
    /// call-remote-push-interval); zero sends it once. PushKit pushes are never repeated.
    public var callRemotePushInterval: Duration = .zero
    /// The end-to-end-encrypted call route: an INVITE carrying a sealed call offer (`application/vnd.nse.envelope`)
    /// is pushed as an alert with the offer as `enc`, for the extension to open and escalate, instead of PushKit.
    public var e2eeCalls: Bool = false
    /// The same route for these addresses of record only (as `SIPServer.aorKey` writes them): per device, the
    /// others keep PushKit.
    public var e2eeCallsFor: Set<String> = []
    /// The conference factory's URI (chat rooms are created by an INVITE to it); nil: `conference-factory` at any
    /// domain, the room made in the domain the INVITE named.
    public var conferenceFactory: SIPURI?
    /// `--record DIR`: each push sent for a held MESSAGE written as a replay case (docs/replay.md).
    public var recording: ServerCaseRecording?
    /// How often expired held messages and bindings are swept.
    public var expirySweepInterval: Duration
    /// Registration lifetime when the REGISTER gives none.
    public var defaultRegistrationExpires: Int
    /// Upper bound on granted registration lifetimes.
    public var maxRegistrationExpires: Int
    /// Timers of the server's client transactions (MESSAGEs sent to devices).
    public var timers: SIPTimers
    /// Push settings.
    public var push: Push
    /// Fault injection knobs.
    public var faults: Faults
    /// The `Server` header value; nil to omit it.
    public var serverHeader: String?

    /// Creates a configuration; the defaults listen on UDP and TCP 127.0.0.1:5060 without auth or database.
    public init(
        listeners: [Listener] = [Listener(transport: .udp, port: 5060), Listener(transport: .tcp, port: 5060)],
        tls: TLSFiles? = nil, limits: SIPParserLimits = .default, databaseDirectory: String? = nil,
        usersFile: String? = nil, users: [String: String]? = nil, realm: String? = nil,
        authAlgorithms: [DigestAlgorithm] = [.sha256, .md5], nonceLifetime: Int = 300,
        messageAcceptTimeout: Duration = .seconds(5), heldMessageLifetime: Int = 604_800,
        callForkTimeout: Duration = .seconds(90), expirySweepInterval: Duration = .seconds(30),
        defaultRegistrationExpires: Int = 3600,
        maxRegistrationExpires: Int = 86_400, timers: SIPTimers = .default, push: Push = Push(),
        faults: Faults = Faults(), serverHeader: String? = "nse-sipserver"
    ) {
        self.listeners = listeners
        self.tls = tls
        self.limits = limits
        self.databaseDirectory = databaseDirectory
        self.usersFile = usersFile
        self.users = users
        self.realm = realm
        self.authAlgorithms = authAlgorithms
        self.nonceLifetime = nonceLifetime
        self.messageAcceptTimeout = messageAcceptTimeout
        self.heldMessageLifetime = heldMessageLifetime
        self.callForkTimeout = callForkTimeout
        self.expirySweepInterval = expirySweepInterval
        self.defaultRegistrationExpires = defaultRegistrationExpires
        self.maxRegistrationExpires = maxRegistrationExpires
        self.timers = timers
        self.push = push
        self.faults = faults
        self.serverHeader = serverHeader
    }

    /// Parses a users file: `username password` per line, blank lines and `#` comments ignored.
    public static func parseUsers(_ text: String) -> [String: String] {
        var users: [String: String] = [:]
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2 else { continue }
            users[String(parts[0])] = String(parts[1])
        }
        return users
    }

    /// Reads and parses a users file.
    public static func loadUsers(path: String) throws -> [String: String] {
        let limit = 1 << 20
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(path, limit: limit) } catch {
            throw SIPServerError("cannot read users file: \(error)")
        }
        guard let bytes else { throw SIPServerError("\(path) is larger than \(limit) bytes") }
        return parseUsers(String(decoding: bytes, as: UTF8.self))
    }
}

/// A bound listening socket, as returned by `SIPServer.start()`.
public struct SIPServerBoundAddress: Sendable, Hashable, CustomStringConvertible {
    /// The transport.
    public var transport: SIPTransportKind
    /// The bound IP address.
    public var host: String
    /// The actual bound port (never 0).
    public var port: Int

    /// `transport:host:port`.
    public var description: String {
        let h = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return "\(transport.rawValue):\(h):\(port)"
    }

    /// A proxy URI for `SIPUserAgent`, e.g. `sip:127.0.0.1:5070;transport=tcp`.
    public var proxyURI: SIPURI {
        SIPURI(
            scheme: .sip, host: host, port: port,
            parameters: transport == .udp ? [] : [SIPParameter("transport", transport.rawValue)])
    }
}

/// Something observable the server did (also kept in `SIPServer.eventLog()`).
public enum SIPServerEvent: Sendable, Hashable {
    /// A binding was stored or refreshed.
    case registered(aor: String, contact: String, expires: Int, transport: SIPTransportKind)
    /// A binding was removed (Expires 0) or expired.
    case unregistered(aor: String, contact: String)
    /// A binding was stored (its `registered` event just before) with RFC 8599 push parameters that cannot work.
    case badPushParameters(aor: String, problem: PushParameterProblem)
    /// A MESSAGE was persisted for fork-late delivery, for `devices` (the AOR's bindings when it arrived, by their
    /// registrar keys).
    case held(aor: String, callID: String, id: String, devices: [String])
    /// One push attempt: status nil when the request failed; reason is APNs' reason or the error.
    case pushed(aor: String, callID: String, url: String, status: Int?, reason: String)
    /// A MESSAGE copy was sent to a device flow (`attempt` counts sends, duplicates included).
    case forwarded(aor: String, callID: String, transport: SIPTransportKind, attempt: Int)
    /// A device answered 2xx: the held message is marked delivered to it (persisted); `remaining` devices still
    /// wait for it (0: delivered to all). `device` is nil for a message held before per-device delivery.
    case delivered(aor: String, callID: String, id: String, device: String?, remaining: Int)
    /// A held message reached its lifetime before every device had it and was dropped; `devices` never got it.
    case expired(aor: String, callID: String, id: String, devices: [String])
    /// The server sent a final response to a request it received.
    case answered(method: String, callID: String, status: Int)
    /// A call went a step further (held, forwarded, ringing, answered, …); `status` is the SIP status that took it
    /// there, when one did.
    case call(aor: String, callID: String, step: CallStep, status: Int?)
    /// A chat room went a step further (created, a device invited, joined, declined, the subject or participants
    /// changed): `aor` is the participant concerned (the creator, the admin who changed the subject), `device` its
    /// binding key, `status` the device's answer, when there is one.
    case room(room: String, step: RoomStep, aor: String?, device: String?, status: Int?)
}
