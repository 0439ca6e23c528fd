import NSEAPNs
import NSEChat
import NSECrypto
import NSEHTTP
import NSEJSON
import NSEPayload
public import NSESIP
import NSESystem

/// RFC 8599 push parameters of a Contact, parsed the way Flexisip does for Apple devices.
public struct PushParameters: Sendable, Hashable {
    /// `pn-provider` (`apns`, `apns.dev`, ...), lowercased.
    public var provider: String
    /// The raw `pn-prid`.
    public var prid: String
    /// The raw `pn-param`.
    public var param: String
    /// Team id: the part of `pn-param` before the first dot.
    public var teamID: String
    /// Bundle id: `pn-param` minus the team id and the service suffix (the APNs topic for alerts).
    public var bundleID: String
    /// Services named by `pn-param` (`remote`, `voip`).
    public var services: [String]
    /// Token per service (`remote`, `voip`), from `TOKEN` or `TOKEN:voip&TOKEN:remote`.
    public var tokens: [String: String]
    /// Loc-key override (`pn-msg-str`), if any.
    public var messageLocKey: String?
    /// Sound override (`pn-msg-snd`), if any.
    public var messageSound: String?
    /// Loc-key override for calls (`pn-call-str`), if any.
    public var callLocKey: String?
    /// Sound override for calls (`pn-call-snd`), if any.
    public var callSound: String?
    /// Why these parameters cannot work as they stand (Flexisip's parsing, then APNs's reading of each token), or
    /// nil; a problem that ``PushParameterProblem/stopsPush`` leaves the binding without pushes.
    public var problem: PushParameterProblem?

    /// The token to use for a MESSAGE (the `remote` one), if any.
    public var remoteToken: String? { tokens["remote"] }

    /// Whether these parameters wake the same app on the same device as `other`: the same provider and app, and a
    /// token in common. Flexisip keeps one binding for such parameters (`Record::matchContacts`): the app registered
    /// again under another instance, or a reinstall that kept its token.
    public func wakesSameApp(as other: PushParameters) -> Bool {
        provider == other.provider && teamID == other.teamID && bundleID == other.bundleID
            && !Set(tokens.values).isDisjoint(with: other.tokens.values)
    }

    /// True for `apns` / `apns.dev`.
    public var isAPNs: Bool { provider == "apns" || provider == "apns.dev" }

    /// The problem that keeps any push from being built from these parameters, if there is one.
    public var pushStopper: PushParameterProblem? { problem.flatMap { $0.stopsPush ? $0 : nil } }

    /// Why a Contact URI carries only part of the push parameters (some of `pn-provider`, `pn-prid`, `pn-param`
    /// given or empty, the others not), or nil when it has all three or none. Such a Contact gets no
    /// ``PushParameters``; the registrar reports the problem.
    public static func incompleteProblem(contactURI: SIPURI) -> PushParameterProblem? {
        let names = ["pn-provider", "pn-prid", "pn-param"]
        let params = contactURI.parameters
        guard names.contains(where: { params.contains(parameter: $0) }) else { return nil }
        let missing = names.filter { (params.value(of: $0) ?? "").isEmpty }
        return missing.isEmpty ? nil : .missing(missing)
    }

    /// Parses the Contact URI parameters; nil when `pn-provider`, `pn-prid` or `pn-param` is missing or empty
    /// (``incompleteProblem(contactURI:)`` says which).
    public init?(contactURI: SIPURI) {
        let params = contactURI.parameters
        guard let provider = params.value(of: "pn-provider"), let prid = params.value(of: "pn-prid"),
            let param = params.value(of: "pn-param"), !provider.isEmpty, !prid.isEmpty, !param.isEmpty
        else { return nil }
        self.init(
            provider: provider, prid: prid, param: param,
            messageLocKey: params.value(of: "pn-msg-str"), messageSound: params.value(of: "pn-msg-snd"),
            callLocKey: params.value(of: "pn-call-str"), callSound: params.value(of: "pn-call-snd"))
    }

    /// Parses raw values.
    public init(
        provider: String, prid: String, param: String, messageLocKey: String? = nil, messageSound: String? = nil,
        callLocKey: String? = nil, callSound: String? = nil
    ) {
        self.provider = ASCII.lowercased(PushParameters.percentDecode(provider))
        let prid = PushParameters.percentDecode(prid)
        let param = PushParameters.percentDecode(param)
        self.prid = prid
        self.param = param
        self.messageLocKey = messageLocKey.map(PushParameters.percentDecode)
        self.messageSound = messageSound.map(PushParameters.percentDecode)
        self.callLocKey = callLocKey.map(PushParameters.percentDecode)
        self.callSound = callSound.map(PushParameters.percentDecode)
        // pn-param: TEAMID.BUNDLEID.SERVICES, or TEAMID.BUNDLEID (= remote).
        var team = ""
        var rest = Substring(param)
        if let dot = param.firstIndex(of: ".") {
            team = String(param[param.startIndex..<dot])
            rest = param[param.index(after: dot)...]
        }
        var services = ["remote"]
        var bundle = String(rest)
        if let lastDot = rest.lastIndex(of: ".") {
            let suffix = rest[rest.index(after: lastDot)...]
            let parts = suffix.split(separator: "&").map(String.init)
            if !parts.isEmpty, parts.allSatisfy({ $0 == "voip" || $0 == "remote" }) {
                services = parts
                bundle = String(rest[rest.startIndex..<lastDot])
            }
        }
        self.teamID = team
        self.bundleID = bundle
        self.services = services
        // pn-prid: TOKEN, or TOKEN:service&TOKEN:service.
        var tokens: [String: String] = [:]
        if prid.contains(":") {
            for item in prid.split(separator: "&") {
                if let colon = item.lastIndex(of: ":") {
                    tokens[String(item[item.index(after: colon)...])] = String(item[item.startIndex..<colon])
                }
            }
        } else {
            for service in services { tokens[service] = prid }
        }
        self.tokens = tokens
        self.problem = PushParameterProblem.diagnose(provider: self.provider, param: param, prid: prid)
    }

    /// Decodes `%XX` escapes (URI parameters may carry escaped `&` or `:`).
    static func percentDecode(_ s: String) -> String {
        guard s.utf8.contains(UInt8(ascii: "%")) else { return s }
        var out: [UInt8] = []
        let bytes = Array(s.utf8)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let h = Hex.value(ofDigit: bytes[i + 1]),
                let l = Hex.value(ofDigit: bytes[i + 2])
            {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Builds Flexisip-shaped APNs requests for MESSAGEs.
public enum APNsMessagePush {
    /// The JSON payload Flexisip sends for an instant message.
    public static func payload(
        callID: String, fromURI: String, displayName: String, privacy: Bool, instanceID: String,
        ttl: Int, sendTime: String, locKey: String = "IM_MSG", sound: String = "msg.caf", chatRoomAddress: String = ""
    ) -> [UInt8] {
        let locArg = privacy ? "" : (displayName.isEmpty ? fromURI : displayName)
        let json: JSON = [
            "aps": [
                "alert": [
                    "loc-key": .string(locKey),
                    "loc-args": [.string(locArg)],
                ],
                "sound": .string(sound),
                "mutable-content": 1,
                "badge": 1,
            ],
            "from-uri": .string(fromURI),
            "display-name": .string(displayName),
            "call-id": .string(callID),
            "pn_ttl": .int(Int64(ttl)),
            "uuid": .string(instanceID),
            "send-time": .string(sendTime),
            "chat-room-addr": .string(chatRoomAddress),
            "customPayload": [:],
        ]
        return json.serializedBytes()
    }

    /// Sends a push: HTTP/2 over TLS for https, HTTP/2 prior knowledge then HTTP/1.1 for http.
    static func send(_ request: HTTPRequest) async -> (status: Int?, reason: String) {
        let client = HTTPClient()
        do {
            let response = try await client.send(request)
            if request.version == .http2PriorKnowledge, response.status == 505 {
                return await sendHTTP1(request)
            }
            return outcome(APNsAnswer(response))
        } catch {
            if request.version == .http2PriorKnowledge { return await sendHTTP1(request) }
            return (nil, "\(error)")
        }
    }

    private static func sendHTTP1(_ request: HTTPRequest) async -> (status: Int?, reason: String) {
        var retry = request
        retry.version = .http11
        do {
            let response = try await HTTPClient().send(retry)
            return outcome(APNsAnswer(response))
        } catch {
            return (nil, "\(error)")
        }
    }

    /// The `pushed` event's status and reason: APNs's answer read as `nse push` reads it (its `reason`, or the start
    /// of a body that is not APNs JSON), and for an answer with neither (a success, an empty error) what the event
    /// says instead.
    private static func outcome(_ answer: APNsAnswer) -> (status: Int?, reason: String) {
        (answer.status, answer.reason ?? (answer.status / 100 == 2 ? "ok" : "http \(answer.status)"))
    }

    /// True for IMDNs: `message/imdn+xml`, or CPIM whose inner Content-Type is `message/imdn+xml` (never pushed).
    public static func isIMDN(contentType: String?, body: [UInt8]) -> Bool {
        guard let contentType else { return false }
        let type = ASCII.lowercased(contentType)
        if type.hasPrefix("message/imdn+xml") { return true }
        guard type.hasPrefix("message/cpim"), let message = CPIMMessage(bytes: body) else { return false }
        return message.contentType == "message/imdn+xml"
    }
}
