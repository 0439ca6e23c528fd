public import NSEJSON

/// One scripted answer of `nse serve`, for a push server's own tests: the next `count` pushes (to one token, or to
/// any) get an APNs error instead of being accepted (its body empty if asked), wait before being answered, lose
/// their connection to a GOAWAY, or have their stream reset; or, for a ``ConnectionFault``, the next connections
/// wait, or a provider's connections are capped. Made from `--fault SPEC` or `POST /v1/control/faults`
/// (docs/serve.md, "Fault injection").
public struct FaultRule: Sendable, Equatable {
    /// A rule about connections rather than pushes.
    public enum ConnectionFault: Sendable, Equatable {
        /// The next `count` connections are not read for this many seconds: no TLS handshake, no preface, nothing
        /// answered, as an overloaded front end that accepts late.
        case connectDelay(Double)
        /// The next `count` HTTP/2 connections get the server's SETTINGS frame this many seconds late: a client that
        /// waits for it before its first request waits too.
        case settingsDelay(Double)
        /// At most this many connections per provider (until the rule is removed); a connection past it is sent
        /// GOAWAY(ENHANCE_YOUR_CALM) at its first push, which is not taken.
        case maxConnections(Int)
    }

    /// Set for a rule about connections; then no push field is.
    public var connection: ConnectionFault?
    /// The token the rule is for (lowercase hex); `nil`: every push.
    public var token: String?
    /// The answer instead of acceptance: APNs's status and reason (410's `timestamp` too).
    public var answer: APNsError?
    /// The connection is closed with GOAWAY (HTTP/2) or closed (HTTP/1.1); the push is not accepted.
    public var goAway: Bool
    /// The push's HTTP/2 stream is reset (RST_STREAM INTERNAL_ERROR) instead of answered; an HTTP/1.1 connection is
    /// closed. The push is not accepted.
    public var resetStream: Bool
    /// The scripted ``answer`` goes with an empty body instead of `{"reason": …}`: a client must cope with it.
    public var emptyBody: Bool
    /// The scripted ``answer`` goes with a body that is not JSON (`{"reason":"Bad`, cut off), as a proxy that
    /// truncated it would leave it: a client must not crash on it.
    public var malformedBody = false
    /// Seconds to wait before answering (the scripted answer, or the usual one).
    public var delay: Double
    /// How many pushes the rule applies to.
    public var count: Int

    /// The statuses APNs answers with, and the reason a rule gets when it names none.
    public static let statuses: [Int: String?] = [
        400: nil, 403: nil, 404: nil, 405: nil, 410: "Unregistered", 413: "PayloadTooLarge",
        429: "TooManyRequests", 500: "InternalServerError", 503: "ServiceUnavailable",
    ]
    /// At most this long a delay (seconds): past it a client would have timed out anyway.
    public static let maxDelay = 300.0
    public static let maxCount = 1_000_000

    public init(
        token: String? = nil, answer: APNsError? = nil, goAway: Bool = false, delay: Double = 0, count: Int = 1,
        resetStream: Bool = false, emptyBody: Bool = false
    ) {
        self.token = token
        self.answer = answer
        self.goAway = goAway
        self.delay = delay
        self.count = count
        self.resetStream = resetStream
        self.emptyBody = emptyBody
    }

    /// Why a rule cannot be made: one line naming the field.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// From its JSON form: `{"token": HEX, "status": 429, "reason": "TooManyRequests", "timestamp": MS,
    /// "delay": SECONDS, "goaway": true, "rst_stream": true, "empty_body": true, "malformed_body": true,
    /// "count": N}`; every member optional,
    /// but the rule must do something.
    /// - Parameter now: Unix milliseconds, the timestamp of a 410 that names none.
    public init(json: JSON, now: Int64) throws(Invalid) {
        guard let object = json.objectValue else { throw Invalid(description: "a fault is a JSON object") }
        let pushFields: Set<String> = [
            "token", "status", "reason", "timestamp", "delay", "goaway", "rst_stream", "empty_body", "malformed_body",
        ]
        let connectionFields: Set<String> = ["connect_delay", "settings_delay", "max_connections"]
        let known = pushFields.union(connectionFields).union(["count"])
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw Invalid(
                description: "unknown fault field \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        if object.keys.contains(where: connectionFields.contains) {
            self = try Self.connectionRule(object, pushFields: pushFields)
            return
        }
        var rule = FaultRule()
        if let token = object["token"], !token.isNull {
            guard let text = token.stringValue, APNsValidation.isTokenShaped(text) else {
                throw Invalid(description: "fault token must be a hex device token")
            }
            rule.token = text.lowercased()
        }
        if let goAway = object["goaway"], !goAway.isNull {
            guard let flag = goAway.boolValue else { throw Invalid(description: "fault goaway must be true or false") }
            rule.goAway = flag
        }
        for (name, flag) in [
            ("rst_stream", \FaultRule.resetStream), ("empty_body", \FaultRule.emptyBody),
            ("malformed_body", \FaultRule.malformedBody),
        ] {
            guard let value = object[name], !value.isNull else { continue }
            guard let set = value.boolValue else { throw Invalid(description: "fault \(name) must be true or false") }
            rule[keyPath: flag] = set
        }
        if let delay = object["delay"], !delay.isNull {
            guard let seconds = delay.doubleValue, seconds >= 0, seconds <= Self.maxDelay else {
                throw Invalid(description: "fault delay must be seconds between 0 and \(Int(Self.maxDelay))")
            }
            rule.delay = seconds
        }
        if let count = object["count"], !count.isNull {
            guard let number = count.intValue, number >= 1, number <= Self.maxCount else {
                throw Invalid(description: "fault count must be between 1 and \(Self.maxCount)")
            }
            rule.count = Int(number)
        }
        let reason = object["reason"]?.stringValue
        if let reason {
            guard Self.isReasonWord(reason) else {
                throw Invalid(description: "fault reason must be an APNs reason word, e.g. TooManyRequests")
            }
        }
        if let status = object["status"], !status.isNull {
            guard let code = status.intValue, let fallback = Self.statuses[Int(code)] else {
                let known = Self.statuses.keys.sorted().map(String.init).joined(separator: ", ")
                throw Invalid(description: "fault status must be one APNs answers with (\(known))")
            }
            guard let chosen = reason ?? fallback else {
                throw Invalid(description: "fault status \(code) needs a reason (APNs has several for it)")
            }
            var timestamp: Int64?
            if code == 410 {
                if let given = object["timestamp"], !given.isNull {
                    guard let milliseconds = given.intValue, milliseconds >= 0 else {
                        throw Invalid(description: "fault timestamp must be Unix milliseconds")
                    }
                    timestamp = milliseconds
                } else {
                    timestamp = now
                }
            } else if object["timestamp"] != nil {
                throw Invalid(description: "fault timestamp goes only with status 410")
            }
            rule.answer = APNsError(Int(code), chosen, timestamp: timestamp)
        } else if object["timestamp"] != nil {
            throw Invalid(description: "fault timestamp goes only with status 410")
        } else if reason != nil && !rule.goAway {
            throw Invalid(description: "fault reason needs a status (or goaway)")
        }
        if [rule.answer != nil, rule.goAway, rule.resetStream].filter({ $0 }).count > 1 {
            throw Invalid(
                description: "a fault answers a status, closes with goaway or resets the stream: one, not both")
        }
        if rule.emptyBody, rule.answer == nil {
            throw Invalid(description: "fault empty_body needs a status")
        }
        if rule.malformedBody, rule.answer == nil || rule.emptyBody {
            throw Invalid(description: "fault malformed_body needs a status, and not empty_body")
        }
        if rule.goAway, let reason { rule.goAwayReason = reason }
        guard rule.answer != nil || rule.goAway || rule.resetStream || rule.delay > 0 else {
            throw Invalid(description: "a fault needs a status, goaway, rst_stream or a delay")
        }
        self = rule
    }

    /// A rule about connections: one of `connect_delay`, `settings_delay` (with `count`) or `max_connections`, and
    /// nothing about pushes.
    private static func connectionRule(_ object: JSONObject, pushFields: Set<String>) throws(Invalid) -> FaultRule {
        let named = ["connect_delay", "settings_delay", "max_connections"].filter { object[$0] != nil }
        guard named.count == 1, let name = named.first, let value = object[name] else {
            throw Invalid(description: "a fault has one of connect_delay, settings_delay and max_connections, not two")
        }
        if let field = object.keys.sorted().first(where: pushFields.contains) {
            throw Invalid(description: "fault \(name) is about connections: it takes no \(field)")
        }
        var rule = FaultRule()
        switch name {
        case "max_connections":
            guard let number = value.intValue, number >= 1, number <= 100_000 else {
                throw Invalid(description: "fault max_connections must be between 1 and 100000")
            }
            guard object["count"] == nil else {
                throw Invalid(description: "fault max_connections stays until removed: it takes no count")
            }
            rule.connection = .maxConnections(Int(number))
        default:
            guard let seconds = value.doubleValue, seconds > 0, seconds <= maxDelay else {
                throw Invalid(description: "fault \(name) must be seconds above 0 and at most \(Int(maxDelay))")
            }
            rule.connection = name == "connect_delay" ? .connectDelay(seconds) : .settingsDelay(seconds)
            if let count = object["count"], !count.isNull {
                guard let number = count.intValue, number >= 1, number <= maxCount else {
                    throw Invalid(description: "fault count must be between 1 and \(maxCount)")
                }
                rule.count = Int(number)
            }
        }
        return rule
    }

    /// How many uses the rule has: `count`, or every one until removed for a connection cap.
    public var uses: Int? {
        if case .maxConnections = connection { return nil }
        return count
    }

    /// Whether `text` can be an APNs reason: one word of ASCII letters and digits (`TooManyRequests`), at most 64.
    public static func isReasonWord(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    /// The reason in a GOAWAY's debug data (`{"reason": …}`, as APNs sends).
    public var goAwayReason = "Shutdown"

    /// From `--fault`: comma-separated `key=value` pairs with the JSON form's names, `goaway`, `rst_stream` or
    /// `empty_body` alone for `=true`; e.g. `status=429,count=3`, `token=ab12…,status=410`, `delay=2`, `goaway`,
    /// `rst_stream`, `status=500,empty_body`, `connect_delay=2,count=3`, `settings_delay=1`, `max_connections=2`.
    public init(spec: String, now: Int64) throws(Invalid) {
        var object = JSONObject()
        for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let key = pair[0].trimmingSpaces
            let value = pair.count == 2 ? pair[1].trimmingSpaces : nil
            guard !key.isEmpty else { throw Invalid(description: "--fault \(spec): an empty item") }
            switch (key, value) {
            case ("goaway", nil), ("rst_stream", nil), ("empty_body", nil), ("malformed_body", nil): object[key] = true
            case ("goaway", let value?), ("rst_stream", let value?), ("empty_body", let value?),
                ("malformed_body", let value?):
                object[key] = value == "true" ? true : value == "false" ? false : .string(value)
            case ("token", let value?), ("reason", let value?): object[key] = .string(value)
            case ("delay", let value?), ("connect_delay", let value?), ("settings_delay", let value?):
                guard let seconds = Double(value) else {
                    throw Invalid(description: "--fault \(spec): \(key) must be seconds")
                }
                object[key] = .double(seconds)
            case (_, let value?):
                guard let number = Int64(value) else {
                    throw Invalid(description: "--fault \(spec): \(key) must be a number")
                }
                object[key] = .int(number)
            case (_, nil):
                throw Invalid(description: "--fault \(spec): \(key) needs a value (\(key)=…)")
            }
        }
        try self.init(json: .object(object), now: now)
    }

    /// The JSON form, as `GET /v1/control/faults` lists it.
    public var json: JSON {
        switch connection {
        case .connectDelay(let seconds): return ["connect_delay": .double(seconds), "count": .int(count)]
        case .settingsDelay(let seconds): return ["settings_delay": .double(seconds), "count": .int(count)]
        case .maxConnections(let cap): return ["max_connections": .int(cap)]
        case nil: break
        }
        var object: JSONObject = ["token": .string(token), "count": .int(count)]
        if let answer {
            object["status"] = .int(answer.status)
            object["reason"] = .string(answer.reason)
            if let timestamp = answer.timestamp { object["timestamp"] = .int(timestamp) }
        }
        if goAway {
            object["goaway"] = true
            object["reason"] = .string(goAwayReason)
        }
        if resetStream { object["rst_stream"] = true }
        if emptyBody { object["empty_body"] = true }
        if malformedBody { object["malformed_body"] = true }
        if delay > 0 { object["delay"] = .double(delay) }
        return .object(object)
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
