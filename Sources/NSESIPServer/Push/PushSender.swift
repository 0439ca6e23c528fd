import NSEHTTP
import NSESIP
import NSESystem

/// Wakes a device for a held MESSAGE the way Flexisip does: one APNs alert push per binding with push parameters.
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
        var baseURL: String
        var push: PushParameters
        var payload: [UInt8]
        var ttl: Int
        var now: Int64
        var settings: SIPServerConfiguration.Push

        /// Builds the request (with a provider token when configured) and sends it.
        func run() async -> Outcome {
            let token: String?
            if let providerToken = settings.providerToken { token = await providerToken() } else { token = nil }
            guard
                let request = APNsMessagePush.request(
                    baseURL: baseURL, push: push, payload: payload, ttl: ttl, now: now,
                    settings: settings, providerToken: token)
            else {
                return Outcome(aor: aor, callID: callID, url: baseURL, status: nil, reason: "no remote token")
            }
            let result = await APNsMessagePush.send(request)
            return Outcome(aor: aor, callID: callID, url: request.url, status: result.status, reason: result.reason)
        }
    }

    let settings: SIPServerConfiguration.Push

    /// The push for one held message and one binding's push parameters; nil when pushes are turned off.
    func plan(record: HeldMessage, request: SIPRequest, push: PushParameters, instance: String?) -> Plan? {
        guard settings.enabled else { return nil }
        let url = push.provider == "apns.dev" ? settings.apnsDevelopmentURL : settings.apnsURL
        guard push.isAPNs else {
            return .skipped(
                Outcome(
                    aor: record.aor, callID: record.callID, url: "", status: nil,
                    reason: "unsupported provider \(push.provider)"))
        }
        guard let token = push.remoteToken, !token.isEmpty else {
            return .skipped(
                Outcome(aor: record.aor, callID: record.callID, url: url, status: nil, reason: "no remote token"))
        }
        let from = request.headers.from
        let fromURI = from?.uri ?? SIPURI(host: "unknown")
        let privacyHeader = ASCII.lowercased(request.headers["Privacy"] ?? "")
        let privacy =
            privacyHeader.contains("id") || privacyHeader.contains("user")
            || ASCII.lowercased(fromURI.user ?? "") == "anonymous"
        let now = Clock.unixSeconds()
        let payload = APNsMessagePush.payload(
            callID: record.callID, fromURI: fromURI.description,
            displayName: from?.displayName ?? "", privacy: privacy,
            instanceID: instance ?? "", ttl: settings.ttl,
            sendTime: Clock.flexisipTime(unixSeconds: now),
            locKey: push.messageLocKey ?? "IM_MSG", sound: push.messageSound ?? "msg.caf")
        return .send(
            Job(
                aor: record.aor, callID: record.callID, baseURL: url, push: push, payload: payload,
                ttl: settings.ttl, now: now, settings: settings))
    }
}
