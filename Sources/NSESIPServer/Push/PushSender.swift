import NSEAPNs
import NSEHTTP
import NSEPayload
import NSESIP
import NSESystem

/// Wakes a device the way Flexisip does: an APNs alert push per binding with push parameters for a held MESSAGE,
/// and for a held call a PushKit (`voip`) push when the binding has a voip token, the `IC_MSG` alert otherwise.
///
/// `plan` decides synchronously (on the server actor) whether there is anything to send; the returned `Job` does the
/// network part and is run as a child task of the server, so shutting the server down cancels it.
struct PushSender: Sendable {
    /// What became of one push: the `pushed` event's fields.
    struct Outcome: Sendable {
        var aor: String
        var callID: String
        var url: String
        var status: Int?
        var reason: String
    }

    /// What to do for one binding.
    enum Plan: Sendable {
        /// Nothing can be sent (unsupported provider, no token): report this at once.
        case skipped(Outcome)
        /// Send this push.
        case send(Job)
    }

    /// One push, ready to go but for the provider token (fetched when it runs, so it is fresh).
    struct Job: Sendable {
        var aor: String
        var callID: String
        var push: APNsPush
        var settings: SIPServerConfiguration.Push

        /// The HTTP request. The provider request is NSEAPNs's (the one `nse push` sends); what differs here is
        /// only how it travels: h2 by ALPN for https (Apple), prior knowledge for http, the configured connect
        /// timeout.
        var request: HTTPRequest {
            var request = push.request
            request.connectTimeout = settings.connectTimeout
            request.version =
                ASCII.lowercased(push.baseURL).hasPrefix("https://") ? .http2OverTLS : .http2PriorKnowledge
            return request
        }

        /// Where the push goes: the APNs host, the device token and the topic (one push per message each).
        var destination: String { "\(push.baseURL) \(push.deviceToken) \(push.topic ?? "")" }

        /// Adds the provider token (when configured) and sends the request.
        func run() async -> Outcome {
            var job = self
            if let providerToken = settings.providerToken { job.push.providerToken = await providerToken() }
            let request = job.request
            let result = await APNsMessagePush.send(request)
            return Outcome(aor: aor, callID: callID, url: request.url, status: result.status, reason: result.reason)
        }
    }

    /// What a call's push announces.
    enum CallNotice {
        /// The call is ringing: wake the device.
        case incoming
        /// The call ended before the device took it (the caller cancelled, nobody answered): Flexisip's final
        /// "Missing call" notice, sent only in the alert form (it replaces the ringing alert: same collapse id).
        case missed
        /// Another device answered: "Accepted elsewhere" (alert form only, like every notice).
        case answeredElsewhere
        /// Another device declined the call with a 6xx: "Declined elsewhere".
        case declinedElsewhere

        /// The loc-key of a notice.
        var locKey: String? {
            switch self {
            case .incoming: return nil
            case .missed: return "Missing call"
            case .answeredElsewhere: return "Accepted elsewhere"
            case .declinedElsewhere: return "Declined elsewhere"
            }
        }
    }

    let settings: SIPServerConfiguration.Push

    /// The push for one held message and one binding's push parameters; nil when pushes are turned off.
    func plan(record: HeldMessage, request: SIPRequest, push: PushParameters, instance: String?) -> Plan? {
        guard settings.enabled else { return nil }
        let url = baseURL(push)
        if let problem = push.pushStopper {
            return .skipped(unusable(problem, url: push.isAPNs ? url : "", aor: record.aor, callID: record.callID))
        }
        guard let token = push.remoteToken, !token.isEmpty else {
            return .skipped(
                Outcome(aor: record.aor, callID: record.callID, url: url, status: nil, reason: "no remote token"))
        }
        let caller = Caller(request)
        let now = SystemClock.unixSeconds()
        let payload = APNsMessagePush.payload(
            callID: record.callID, fromURI: caller.uri, displayName: caller.displayName, privacy: caller.private,
            instanceID: instance ?? "", ttl: settings.ttl, sendTime: SystemClock.flexisipTime(unixSeconds: now),
            locKey: push.messageLocKey ?? "IM_MSG", sound: push.messageSound ?? "msg.caf")
        return .send(
            Job(
                aor: record.aor, callID: record.callID,
                push: APNsPush(
                    baseURL: url, deviceToken: token, topic: push.bundleID, pushType: .alert, payload: payload,
                    priority: 10, expiration: now + Int64(settings.ttl), tls: settings.tls,
                    timeout: settings.timeout),
                settings: settings))
    }

    /// The push for a chat room's INVITE held for one binding, as Flexisip sends it for a group chat INVITE: the
    /// message alert with `locKey` (`GC_MSG`), the INVITE's Call-ID, the room as the sender, and `chat-room-addr`
    /// the room's user part (Flexisip's `PushInfo` takes `sip_from->a_url->url_user`); nil when pushes are off.
    func planRoomInvitation(
        room: String, callID: String, aor: String, push: PushParameters, instance: String?, locKey: String
    ) -> Plan? {
        guard settings.enabled else { return nil }
        let url = baseURL(push)
        if let problem = push.pushStopper {
            return .skipped(unusable(problem, url: push.isAPNs ? url : "", aor: aor, callID: callID))
        }
        guard let token = push.remoteToken, !token.isEmpty else {
            return .skipped(Outcome(aor: aor, callID: callID, url: url, status: nil, reason: "no remote token"))
        }
        let now = SystemClock.unixSeconds()
        let payload = APNsMessagePush.payload(
            callID: callID, fromURI: room, displayName: "", privacy: false, instanceID: instance ?? "",
            ttl: settings.ttl, sendTime: SystemClock.flexisipTime(unixSeconds: now), locKey: locKey,
            sound: push.messageSound ?? "msg.caf",
            chatRoomAddress: (try? SIPURI(parsing: room))?.user ?? room)
        return .send(
            Job(
                aor: aor, callID: callID,
                push: APNsPush(
                    baseURL: url, deviceToken: token, topic: push.bundleID, pushType: .alert, payload: payload,
                    priority: 10, expiration: now + Int64(settings.ttl), tls: settings.tls,
                    timeout: settings.timeout),
                settings: settings))
    }

    /// The push for a held call (its INVITE) and one binding: PushKit when the binding has a voip token, the alert
    /// form otherwise (expiration 0, collapse id = Call-ID: a later notice replaces it); nil when pushes are off,
    /// or for a missed-call notice to a PushKit binding (Flexisip sends those only in the alert form).
    ///
    /// With `sealedOffer` (the end-to-end-encrypted route, `--e2ee-calls`) the ringing push is an alert carrying
    /// the offer for the extension to open, whenever the binding has a remote token.
    func planCall(
        _ notice: CallNotice, aor: String, invite: SIPRequest, push: PushParameters, instance: String?,
        sealedOffer: String? = nil
    ) -> Plan? {
        guard settings.enabled else { return nil }
        let callID = invite.headers.callID ?? ""
        let url = baseURL(push)
        if let problem = push.pushStopper {
            return .skipped(unusable(problem, url: push.isAPNs ? url : "", aor: aor, callID: callID))
        }
        let caller = Caller(invite)
        let now = SystemClock.unixSeconds()
        let sendTime = SystemClock.flexisipTime(unixSeconds: now)
        let voipToken = push.services.contains("voip") ? push.tokens["voip"].flatMap { $0.isEmpty ? nil : $0 } : nil
        if notice == .incoming, let sealedOffer, let token = push.remoteToken, !token.isEmpty {
            let payload = APNsCallPush.sealedPayload(
                callID: callID, sealedOffer: sealedOffer, fromURI: caller.uri, displayName: caller.displayName,
                privacy: caller.private, instanceID: instance ?? "", ttl: settings.ttl, sendTime: sendTime,
                locKey: push.callLocKey ?? "IC_MSG", sound: push.callSound ?? "empty")
            return .send(
                Job(
                    aor: aor, callID: callID,
                    push: APNsPush(
                        baseURL: url, deviceToken: token, topic: push.bundleID, pushType: .alert, payload: payload,
                        priority: 10, expiration: 0, collapseID: APNsCallPush.collapseID(callID: callID),
                        tls: settings.tls, timeout: settings.timeout),
                    settings: settings))
        }
        if let token = voipToken {
            // Flexisip's notices go only to devices woken by alerts: a PushKit app ends its CallKit call itself
            // when the INVITE never comes.
            guard notice == .incoming else { return nil }
            let payload = APNsCallPush.voipPayload(
                callID: callID, fromURI: caller.uri, displayName: caller.displayName, privacy: caller.private,
                instanceID: instance ?? "", ttl: settings.ttl, sendTime: sendTime,
                locKey: push.callLocKey ?? "IC_MSG")
            return .send(
                Job(
                    aor: aor, callID: callID,
                    push: APNsPush(
                        baseURL: url, deviceToken: token, topic: push.bundleID + ".voip", pushType: .voip,
                        payload: payload, priority: 10, expiration: 0, tls: settings.tls, timeout: settings.timeout),
                    settings: settings))
        }
        guard let token = push.remoteToken, !token.isEmpty else {
            if notice != .incoming { return nil }
            return .skipped(Outcome(aor: aor, callID: callID, url: url, status: nil, reason: "no remote token"))
        }
        let locKey = notice.locKey ?? push.callLocKey ?? "IC_MSG"
        let payload = APNsMessagePush.payload(
            callID: callID, fromURI: caller.uri, displayName: caller.displayName, privacy: caller.private,
            instanceID: instance ?? "", ttl: settings.ttl, sendTime: sendTime, locKey: locKey,
            sound: notice == .incoming ? push.callSound ?? "empty" : "empty")
        return .send(
            Job(
                aor: aor, callID: callID,
                push: APNsPush(
                    baseURL: url, deviceToken: token, topic: push.bundleID, pushType: .alert, payload: payload,
                    priority: 10, expiration: 0, collapseID: APNsCallPush.collapseID(callID: callID),
                    tls: settings.tls, timeout: settings.timeout),
                settings: settings))
    }

    /// True when a binding is woken for calls by the alert form (it has a remote token and no voip one): the form
    /// Flexisip repeats every `call-remote-push-interval` while the call waits for the device.
    func ringsByAlert(_ push: PushParameters) -> Bool {
        guard settings.enabled, push.pushStopper == nil, let token = push.remoteToken, !token.isEmpty else {
            return false
        }
        return !(push.services.contains("voip") && !(push.tokens["voip"] ?? "").isEmpty)
    }

    private func baseURL(_ push: PushParameters) -> String {
        push.provider == "apns.dev" ? settings.apnsDevelopmentURL : settings.apnsURL
    }

    /// The `pushed` event of a push the binding's parameters cannot make (Flexisip's skipped push): the
    /// diagnosis the registrar reported, which never holds a whole token.
    private func unusable(_ problem: PushParameterProblem, url: String, aor: String, callID: String) -> Outcome {
        Outcome(aor: aor, callID: callID, url: url, status: nil, reason: problem.description)
    }

    /// Who a request is from, as a push shows it: hidden when the request asks for privacy (RFC 3323) or comes
    /// from `anonymous`.
    private struct Caller {
        var uri: String
        var displayName: String
        var `private`: Bool

        init(_ request: SIPRequest) {
            let from = request.headers.from
            let fromURI = from?.uri ?? SIPURI(host: "unknown")
            let privacyHeader = ASCII.lowercased(request.headers["Privacy"] ?? "")
            uri = fromURI.description
            displayName = from?.displayName ?? ""
            `private` =
                privacyHeader.contains("id") || privacyHeader.contains("user")
                || ASCII.lowercased(fromURI.user ?? "") == "anonymous"
        }
    }
}
