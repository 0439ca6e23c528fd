import NSESIP
import NSEHTTP

extension SIPServerConfiguration {
    /// The options understood by `init(arguments:)`, for a CLI's help text.
    public static let argumentsHelp = """
      --listen udp|tcp|tls:HOST:PORT   add a listener (repeatable; port 0 = ephemeral; IPv6 as [::1])
      --tls-cert FILE --tls-key FILE   certificate chain and key (PEM) for tls listeners
      --db DIR                         held-message directory (one JSON file per message)
      --users FILE                     `username password` lines; enables digest auth on REGISTER
      --realm REALM                    digest realm (default: the AOR's domain)
      --auth-algorithms LIST           e.g. SHA-256,MD5 (default)
      --accept-timeout SECONDS         202 Accepted after this (default 5)
      --message-expires SECONDS        held-message lifetime (default 604800)
      --push-url URL                   APNs base URL for pn-provider=apns (and apns.dev unless --push-dev-url)
      --push-dev-url URL               APNs base URL for pn-provider=apns.dev
      --push-ttl SECONDS               apns-expiration/pn_ttl (default 2592000)
      --push-cert FILE [--push-key FILE]  client certificate for APNs
      --push-ca FILE                   CA file for the APNs connection
      --no-push                        never send pushes
      --delay-ms N --drop-first-packets N --always-challenge --answer-503
      --reset-after-register --deliver-duplicates --unrelated-call-id-first --never-answer
    """

    /// Parses CLI options (see `argumentsHelp`); without any `--listen`, listens on udp and tcp 127.0.0.1:5060.
    public init(arguments: [String]) throws {
        self.init(listeners: [])
        var pushCert: String? = nil
        var pushKey: String? = nil
        var devURLGiven = false
        var tlsCert: String? = nil
        var tlsKey: String? = nil
        var i = 0
        func value(_ name: String) throws -> String {
            i += 1
            guard i < arguments.count else { throw SIPServerError("\(name) needs a value") }
            return arguments[i]
        }
        func number(_ name: String) throws -> Int {
            let text = try value(name)
            guard let n = Int(text), n >= 0 else { throw SIPServerError("\(name) needs a non-negative integer") }
            return n
        }
        while i < arguments.count {
            let arg = arguments[i]
            switch arg {
            case "--listen": listeners.append(try SIPServerConfiguration.parseListener(try value(arg)))
            case "--tls-cert": tlsCert = try value(arg)
            case "--tls-key": tlsKey = try value(arg)
            case "--db": databaseDirectory = try value(arg)
            case "--users": usersFile = try value(arg)
            case "--realm": realm = try value(arg)
            case "--auth-algorithms":
                let list = try value(arg).split(separator: ",").map { String($0) }
                var algorithms: [DigestAlgorithm] = []
                for name in list {
                    guard let a = DigestAlgorithm(token: name) else { throw SIPServerError("unknown digest algorithm \(name)") }
                    algorithms.append(a)
                }
                guard !algorithms.isEmpty else { throw SIPServerError("--auth-algorithms is empty") }
                authAlgorithms = algorithms
            case "--accept-timeout": messageAcceptTimeout = .seconds(try number(arg))
            case "--message-expires": heldMessageLifetime = try number(arg)
            case "--push-url":
                push.apnsURL = try value(arg)
                if !devURLGiven { push.apnsDevelopmentURL = push.apnsURL }
            case "--push-dev-url":
                push.apnsDevelopmentURL = try value(arg)
                devURLGiven = true
            case "--push-ttl": push.ttl = try number(arg)
            case "--push-cert": pushCert = try value(arg)
            case "--push-key": pushKey = try value(arg)
            case "--push-ca": push.tls.caFilePath = try value(arg)
            case "--no-push": push.enabled = false
            case "--delay-ms": faults.delayMilliseconds = try number(arg)
            case "--drop-first-packets": faults.dropFirstPackets = try number(arg)
            case "--always-challenge": faults.alwaysChallenge = true
            case "--answer-503": faults.answer503 = true
            case "--reset-after-register": faults.resetConnectionAfterRegister = true
            case "--deliver-duplicates": faults.deliverDuplicates = true
            case "--unrelated-call-id-first": faults.unrelatedCallIDFirst = true
            case "--never-answer": faults.neverAnswer = true
            default: throw SIPServerError("unknown option \(arg)")
            }
            i += 1
        }
        if listeners.isEmpty {
            listeners = [Listener(transport: .udp, port: 5060), Listener(transport: .tcp, port: 5060)]
        }
        if let pushCert { push.tls.clientCertificate = .init(certificatePath: pushCert, keyPath: pushKey) }
        switch (tlsCert, tlsKey) {
        case (let cert?, let key?): tls = TLSFiles(certificatePath: cert, keyPath: key)
        case (nil, nil): break
        default: throw SIPServerError("--tls-cert and --tls-key go together")
        }
        if listeners.contains(where: { $0.transport == .tls }), tls == nil {
            throw SIPServerError("a tls listener needs --tls-cert and --tls-key")
        }
    }

    /// Parses `udp:127.0.0.1:5060`, `tcp:[::1]:0`, `tls:0.0.0.0:5061`.
    public static func parseListener(_ text: String) throws -> Listener {
        guard let colon = text.firstIndex(of: ":"), let kind = SIPTransportKind(token: String(text[text.startIndex..<colon])) else {
            throw SIPServerError("listener must look like udp|tcp|tls:HOST:PORT")
        }
        let rest = text[text.index(after: colon)...]
        let host: String
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw SIPServerError("unterminated IPv6 address in \(text)") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw SIPServerError("missing port in \(text)") }
            portText = after.dropFirst()
        } else {
            guard let last = rest.lastIndex(of: ":") else { throw SIPServerError("missing port in \(text)") }
            host = String(rest[rest.startIndex..<last])
            portText = rest[rest.index(after: last)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw SIPServerError("invalid host or port in \(text)")
        }
        return Listener(transport: kind, host: host, port: port)
    }
}
