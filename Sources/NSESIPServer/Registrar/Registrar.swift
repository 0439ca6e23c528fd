import CoreMetrics
import Logging
import NSESIP
import NSESystem

/// The registrar: who may register (digest, RFC 3261 §22 with the verifier of NSESIP), and each AOR's bindings
/// (RFC 3261 §10, RFC 5626 instances, RFC 8599 push parameters), written through to the database before a 200.
///
/// A value owned by `SIPServer`'s actor: it decides and keeps state; the server answers and emits the events.
struct Registrar {
    struct Binding {
        var key: String
        var aor: String
        var contact: SIPNameAddress
        var expires: Int
        var expiresAt: ContinuousClock.Instant
        /// The same end as Unix seconds, as the database keeps it.
        var expiresAtUnix: Int64
        /// The connection or UDP path the REGISTER came in on; nil for a TCP/TLS binding restored after a restart
        /// (the device reconnects and registers again, usually after a push).
        var flow: ServerFlow?
        /// How the REGISTER came in, kept so a restart can find the device again.
        var route: Route
        var push: PushParameters?
        var instance: String?

        struct Route {
            var transport: SIPTransportKind
            var remoteHost: String
            var remotePort: Int
            var localPort: Int
        }

        var isLive: Bool { flow?.isLive ?? false }

        var stored: StoredBinding {
            StoredBinding(
                aor: aor, key: key, contact: contact.description, instance: instance, expires: expires,
                expiresAt: expiresAtUnix, transport: route.transport, remoteHost: route.remoteHost,
                remotePort: route.remotePort, localPort: route.localPort)
        }
    }

    /// Why a REGISTER was not authorized: the status and headers to answer with.
    struct Denial {
        var status: Int
        var headers: [(String, String)]
    }

    /// What a REGISTER did.
    enum Outcome {
        /// Answer with this status (and reason phrase); nothing changed.
        case refused(status: Int, reason: String?)
        /// The bindings are stored: emit `changes`, answer 200 with `contacts`, deliver held messages to
        /// `deliveryContact` when the REGISTER added one.
        case stored(changes: [SIPServerEvent], contacts: [String], deliveryContact: SIPURI?)
    }

    private let configuration: SIPServerConfiguration
    /// Where the number of bindings is shown.
    private let metrics: SIPServerMetrics
    /// `username password` pairs; nil when REGISTER is not authenticated.
    private(set) var users: [String: String]?
    private var bindings: [String: [Binding]] = [:]
    /// The bindings of every AOR, kept as `bindings` changes (a REGISTER must not count them all), and shown.
    private var bindingCount = 0 {
        didSet { metrics.registrations.set(bindingCount) }
    }
    /// AORs that registered once (or had messages held): a MESSAGE for one of them is answered 480, not 404.
    private var knownAORs: Set<String> = []
    /// Nonces handed out, with when (Unix seconds).
    private var nonces: [String: Int64] = [:]

    init(configuration: SIPServerConfiguration, metrics: SIPServerMetrics = SIPServerMetrics()) {
        self.configuration = configuration
        self.metrics = metrics
    }

    /// Takes the configured users, and those of the users file over them.
    mutating func loadUsers() throws {
        users = configuration.users
        if let path = configuration.usersFile {
            users = (users ?? [:]).merging(try SIPServerConfiguration.loadUsers(path: path)) { _, new in new }
        }
    }

    /// Remembers an AOR as known (it had a message held, or a binding restored).
    mutating func noteKnown(_ aor: String) { knownAORs.insert(aor) }

    /// True when the AOR registered once or names a configured user (480 rather than 404 for it).
    func isKnown(aor: String, user: String?) -> Bool {
        knownAORs.contains(aor) || users?[user ?? ""] != nil
    }

    /// The bindings of an AOR that have not expired.
    func activeBindings(aor: String, now: ContinuousClock.Instant = .now) -> [Binding] {
        (bindings[aor] ?? []).filter { $0.expiresAt > now }
    }

    // MARK: - restart

    /// Brings back stored bindings that have not expired, with their remaining lifetime; `flow` finds the path to
    /// a device again (nil: it reconnects). Returns the number restored; logs the ones whose contact does not parse.
    mutating func restore(
        _ stored: [StoredBinding], expiredAORs: [String], wallNow: Int64, logger: Logger,
        flow: (Binding.Route) -> ServerFlow?
    ) -> Int {
        let now = ContinuousClock.now
        knownAORs.formUnion(expiredAORs)
        var restored = 0
        for b in stored {
            guard let contact = try? SIPNameAddress(parsing: b.contact) else {
                logger.warning(
                    "sip server skipped a stored binding whose contact does not parse",
                    metadata: ["sip.aor": "\(b.aor)"])
                continue
            }
            let route = Binding.Route(
                transport: b.transport, remoteHost: b.remoteHost, remotePort: b.remotePort,
                localPort: b.localPort)
            let binding = Binding(
                key: b.key, aor: b.aor, contact: contact, expires: b.expires,
                expiresAt: now + .seconds(b.expiresAt - wallNow), expiresAtUnix: b.expiresAt,
                flow: b.transport == .udp ? flow(route) : nil, route: route,
                push: PushParameters(contactURI: contact.uri), instance: b.instance)
            bindingCount += 1
            bindings[b.aor, default: []].append(binding)
            knownAORs.insert(b.aor)
            restored += 1
        }
        return restored
    }

    // MARK: - digest

    /// `WWW-Authenticate` headers, one per configured algorithm, each with a fresh nonce remembered for the answer.
    mutating func challengeHeaders(realm: String, stale: Bool) -> [(String, String)] {
        var headers: [(String, String)] = []
        let now = SystemClock.unixSeconds()
        for algorithm in configuration.authAlgorithms {
            let challenge = DigestVerifier(realm: realm, algorithm: algorithm).makeChallenge(stale: stale, qop: true)
            nonces[challenge.nonce] = now
            headers.append(("WWW-Authenticate", challenge.description))
        }
        if nonces.count > 4096 { pruneNonces() }
        return headers
    }

    private mutating func pruneNonces() {
        let limit = SystemClock.unixSeconds() - Int64(configuration.nonceLifetime)
        nonces = nonces.filter { $0.value >= limit }
    }

    /// Nil when the request may register `aorURI` (or no users are configured), else how to answer it.
    mutating func authorize(_ request: SIPRequest, aorURI: SIPURI) -> Denial? {
        guard let users else { return nil }
        let realm = configuration.realm ?? aorURI.host
        guard let header = request.headers["Authorization"],
            let credentials = try? DigestCredentials(parsing: header), credentials.realm == realm
        else {
            return Denial(status: 401, headers: challengeHeaders(realm: realm, stale: false))
        }
        guard let issued = nonces[credentials.nonce],
            issued + Int64(configuration.nonceLifetime) >= SystemClock.unixSeconds()
        else {
            return Denial(status: 401, headers: challengeHeaders(realm: realm, stale: true))
        }
        guard let password = users[credentials.username], credentials.username == (aorURI.user ?? credentials.username),
            DigestVerifier(realm: realm).verify(
                authorization: header, method: request.method.uppercased(),
                password: password, issuedNonce: credentials.nonce)
        else {
            return Denial(status: 403, headers: [])
        }
        return nil
    }

    // MARK: - bindings

    /// Applies an authorized REGISTER for `aor` that came in over `flow`; the new bindings are stored in `database`
    /// before they count (a registrar that answers 200 and then forgets the binding loses the device's messages).
    mutating func register(
        _ request: SIPRequest, aor: String, flow: ServerFlow, database: ServerDatabase?,
        logger log: Logger
    ) -> Outcome {
        let now = ContinuousClock.now
        let wallNow = SystemClock.unixSeconds()
        var current = activeBindings(aor: aor, now: now)
        let rawContacts = request.headers.splitValues("Contact")
        let headerExpires = request.headers.expires
        var deliveryContact: SIPURI? = nil
        // Events are emitted once the new bindings are stored.
        var changes: [SIPServerEvent] = []
        if rawContacts.contains("*") {
            guard headerExpires == 0 else { return .refused(status: 400, reason: nil) }
            for b in current { changes.append(.unregistered(aor: aor, contact: b.contact.uri.description)) }
            current = []
        } else {
            let route = Binding.Route(
                transport: flow.kind, remoteHost: flow.remoteHost, remotePort: flow.remotePort,
                localPort: flow.localPort)
            for contact in request.headers.contacts {
                var expires = contact.expires ?? headerExpires ?? configuration.defaultRegistrationExpires
                expires = min(expires, configuration.maxRegistrationExpires)
                let instance = contact.parameters.value(of: "+sip.instance").map { Registrar.unquote($0) }
                let push = PushParameters(contactURI: contact.uri)
                let key = Registrar.bindingKey(contact: contact, instance: instance, push: push)
                current.removeAll { $0.key == key }
                // One binding per app on a device, as Flexisip: a binding whose push parameters wake the same app
                // (its token again, under another instance) replaces the older one, which would be pushed twice.
                if let push, expires > 0 {
                    for older in current where older.push?.wakesSameApp(as: push) == true {
                        changes.append(.unregistered(aor: aor, contact: older.contact.uri.description))
                        log.notice(
                            "sip server binding replaced: same push parameters", metadata: ["sip.aor": "\(aor)"])
                    }
                    current.removeAll { $0.push?.wakesSameApp(as: push) == true }
                }
                if expires == 0 {
                    changes.append(.unregistered(aor: aor, contact: contact.uri.description))
                    continue
                }
                current.append(
                    Binding(
                        key: key, aor: aor, contact: contact, expires: expires,
                        expiresAt: now + .seconds(expires), expiresAtUnix: wallNow + Int64(expires),
                        flow: flow, route: route, push: push, instance: instance))
                if deliveryContact == nil { deliveryContact = contact.uri }
                changes.append(
                    .registered(aor: aor, contact: contact.uri.description, expires: expires, transport: flow.kind))
                // Stored all the same, as Flexisip does; said at once rather than when a push is due.
                if let problem = push?.problem ?? PushParameters.incompleteProblem(contactURI: contact.uri) {
                    changes.append(.badPushParameters(aor: aor, problem: problem))
                    log.warning(
                        "sip server binding stored with push parameters that cannot work",
                        metadata: [
                            "push.problem": "\(problem.code)", "push.detail": "\(problem.description)",
                            "push.action": "\(problem.pushAction)",
                        ])
                }
                log.debug(
                    "sip server binding stored",
                    metadata: [
                        "sip.expires": "\(expires)", "sip.transport": "\(flow.kind.rawValue)",
                        "sip.push": "\(push != nil)",
                    ])
            }
        }
        do {
            try database?.replaceBindings(aor: aor, with: current.map(\.stored))
        } catch {
            log.error("sip server cannot store bindings", metadata: ["sip.error": "\(error)"])
            return .refused(status: 500, reason: "Binding Not Stored")
        }
        bindingCount += current.count - (bindings[aor]?.count ?? 0)
        bindings[aor] = current.isEmpty ? nil : current
        knownAORs.insert(aor)
        let contacts = current.map { b -> String in
            var c = SIPNameAddress(
                uri: b.contact.uri,
                parameters: [SIPParameter("expires", String(max(0, Int((b.expiresAt - now).components.seconds))))])
            if let instance = b.contact.parameters.value(of: "+sip.instance") {
                c.parameters.append(SIPParameter("+sip.instance", instance))
            }
            return c.description
        }
        return .stored(changes: changes, contacts: contacts, deliveryContact: deliveryContact)
    }

    /// Drops expired bindings (returning their `unregistered` events) and stale nonces; the sweeper's part.
    mutating func sweep(now: ContinuousClock.Instant = .now) -> [SIPServerEvent] {
        var events: [SIPServerEvent] = []
        for (aor, list) in bindings {
            let alive = list.filter { $0.expiresAt > now }
            for b in list where b.expiresAt <= now {
                events.append(.unregistered(aor: aor, contact: b.contact.uri.description))
            }
            bindingCount -= list.count - alive.count
            bindings[aor] = alive.isEmpty ? nil : alive
        }
        pruneNonces()
        return events
    }

    private static func unquote(_ s: String) -> String {
        var t = Substring(s)
        if t.hasPrefix("\""), t.hasSuffix("\""), t.count >= 2 { t = t.dropFirst().dropLast() }
        return String(t)
    }

    private static func bindingKey(contact: SIPNameAddress, instance: String?, push: PushParameters?) -> String {
        if let instance { return "instance:" + instance }
        if let push { return "prid:" + push.prid }
        return "uri:" + (contact.uri.user ?? "") + "@" + contact.uri.hostPort
    }
}
