import NSESIP

/// Plays a `SIPScript` back without I/O: each live message the extension sends, and when it arrived, in; what the
/// peer sends or closes, and when, out. `ScriptedSIPPeer` does the I/O.
///
/// Every recorded event the peer plays hangs on a recorded `sent` event, its anchor, and is due at its recorded
/// offset from it, counted from when the anchor's live counterpart arrived: a response on the request it answers
/// (same Call-ID and CSeq), a request or a close on the `sent` event before it (a retransmission's original). A live
/// request is the counterpart of the next recorded one of its method; a live response, of the recorded answer to the
/// same request. Events whose anchor never comes live are never played.
struct SIPScriptPlayer {
    /// Something the peer does, when, and which recorded event it plays.
    struct Output {
        enum Action {
            /// An answer, on the connection its live request came on.
            case reply(SIPMessage)
            /// A recorded request, on the extension's latest connection.
            case send(SIPMessage)
            /// The extension's latest connection closed.
            case close
        }

        var due: ContinuousClock.Instant
        var action: Action
        var event: Int
    }

    /// Where the peer listens: the sent-by of the requests it sends.
    struct Local {
        var transport: SIPTransportKind
        var host: String
        var port: Int
    }

    let script: SIPScript
    let local: Local
    /// What differed from the recording, for the case's log (status codes, methods, Call-IDs; never a body).
    private(set) var notes: [String] = []

    /// Each playable event's anchor (nil: the first live message).
    private var anchors: [Int: Int?] = [:]
    /// The events that hang on each anchor, in order.
    private var dependents: [Int?: [Int]] = [:]
    /// A recorded retransmission's original.
    private var originals: [Int: Int] = [:]
    /// When each recorded `sent` event's live counterpart arrived, and the live request it was.
    private var arrivals: [Int: ContinuousClock.Instant] = [:]
    private var liveRequests: [Int: (request: SIPRequest, source: SIPEndpoint?)] = [:]
    /// The recorded request each live request's branch was matched to (a retransmission comes with the same one).
    private var byLiveBranch: [String: Int] = [:]
    /// The branch the peer gives each recorded request it sends, by its recorded branch (a retransmission keeps it).
    private var freshBranches: [String: String] = [:]
    /// The answers already played to each recorded request, for a live retransmission the recording did not have.
    private var replies: [Int: [(due: ContinuousClock.Instant, message: SIPMessage)]] = [:]
    private var played: Set<Int> = []
    private var started = false
    /// The latest REGISTER's Contact, recorded and live: a recorded request to the one goes to the other.
    private var contacts: (recorded: SIPURI, live: SIPURI)?

    init(script: SIPScript, local: Local) {
        self.script = script
        self.local = local
        var lastSent: Int?
        var sentByKey: [String: Int] = [:]
        for (index, event) in script.events.enumerated() {
            switch (event.direction, event.kind) {
            case (.sent, .message(let message)):
                if case .request(let request) = message, let key = Self.key(message) {
                    // The same Call-ID, CSeq and branch again: the transaction layer's retransmission over UDP.
                    if let earlier = sentByKey[key],
                        script.events[earlier].request?.headers.topVia?.branch
                            == request.headers.topVia?.branch
                    {
                        originals[index] = originals[earlier] ?? earlier
                    }
                    sentByKey[key] = index
                }
                lastSent = originals[index] ?? index
            case (.sent, .closed):
                continue
            case (.received, .message(.response(let response))):
                // The latest request it answers (after a retransmission: that one).
                guard let key = Self.key(.response(response)), let request = sentByKey[key] else { continue }
                anchors[index] = .some(request)
                dependents[request, default: []].append(index)
            case (.received, _):
                anchors[index] = .some(lastSent)
                dependents[lastSent, default: []].append(index)
            }
        }
    }

    /// The recorded events the peer was told to play (some may not have come due before the case ended).
    var scheduledCount: Int { played.count }
    /// The recorded events the peer had to play.
    var playableCount: Int { anchors.count }

    /// A live message from the extension, arrived at `at` from `source`: what the peer does about it.
    mutating func received(
        _ message: SIPMessage, at: ContinuousClock.Instant, source: SIPEndpoint?
    ) -> [Output] {
        var outputs: [Output] = []
        if !started {
            started = true
            outputs += play(dependents[nil] ?? [], anchor: nil, at: at)
        }
        switch message {
        case .request(let request): outputs += live(request, at: at, source: source)
        case .response(let response): outputs += live(response, at: at)
        }
        return outputs.sorted { ($0.due, $0.event) < ($1.due, $1.event) }
    }

    // MARK: - Live messages

    private mutating func live(
        _ request: SIPRequest, at: ContinuousClock.Instant, source: SIPEndpoint?
    ) -> [Output] {
        let method = request.method.uppercased()
        let branch = request.headers.topVia?.branch ?? ""
        if let earlier = byLiveBranch[branch] {
            let original = originals[earlier] ?? earlier
            // Retransmitted live: the recording's own retransmission of it if it has one, else what was answered.
            guard let index = nextSent(method, where: { originals[$0] == original && $0 > earlier }) else {
                return replies[original, default: []].filter { $0.due <= at }.map {
                    Output(due: at, action: .reply($0.message), event: original)
                }
            }
            return match(index, request: request, at: at, source: source)
        }
        guard let index = nextSent(method, where: { originals[$0] == nil }) else {
            notes.append("sip peer: \(method) (CSeq \(request.headers.cseq?.description ?? "-")) is not in the script")
            return []
        }
        return match(index, request: request, at: at, source: source)
    }

    private mutating func match(
        _ index: Int, request: SIPRequest, at: ContinuousClock.Instant, source: SIPEndpoint?
    ) -> [Output] {
        arrivals[index] = at
        liveRequests[index] = (request, source)
        if let branch = request.headers.topVia?.branch { byLiveBranch[branch] = index }
        if request.method.uppercased() == "REGISTER",
            let recorded = script.events[index].request?.headers.contacts.first,
            let live = request.headers.contacts.first
        {
            contacts = (recorded.uri, live.uri)
        }
        let outputs = play(dependents[index] ?? [], anchor: index, at: at)
        let original = originals[index] ?? index
        var answered = false
        for output in outputs {
            guard case .reply(let message) = output.action else { continue }
            replies[original, default: []].append((output.due, message))
            answered = true
        }
        if !answered, request.method.uppercased() != "ACK" {
            // A fault replayed: the server never answered this one.
            notes.append("sip peer: \(request.method) (event \(index)) is left unanswered, as recorded")
        }
        return outputs
    }

    private mutating func live(_ response: SIPResponse, at: ContinuousClock.Instant) -> [Output] {
        let key = Self.key(.response(response))
        let method = response.headers.cseq?.method ?? "-"
        guard
            let index = script.events.indices.first(where: {
                script.events[$0].direction == .sent && script.events[$0].response != nil && arrivals[$0] == nil
                    && Self.key(script.events[$0].kind) == key
            })
        else {
            notes.append("sip peer: the extension answered \(method) \(response.statusCode); the script has no answer")
            return []
        }
        arrivals[index] = at
        if let recorded = script.events[index].response, recorded.statusCode != response.statusCode {
            notes.append(
                "sip peer: the extension answered \(method) \(response.statusCode), recorded \(recorded.statusCode)"
                    + " (event \(index))")
        }
        return play(dependents[index] ?? [], anchor: index, at: at)
    }

    /// The first recorded `sent` request of `method` not matched yet that `accepts`.
    private func nextSent(_ method: String, where accepts: (Int) -> Bool) -> Int? {
        script.events.indices.first {
            script.events[$0].direction == .sent && arrivals[$0] == nil
                && script.events[$0].request?.method.uppercased() == method && accepts($0)
        }
    }

    // MARK: - What the peer sends

    /// The outputs of the events that hang on `anchor`, whose live counterpart came at `at`.
    private mutating func play(_ events: [Int], anchor: Int?, at: ContinuousClock.Instant) -> [Output] {
        let origin = anchor.map { script.events[$0].milliseconds } ?? 0
        var outputs: [Output] = []
        for index in events where !played.contains(index) {
            let event = script.events[index]
            let due = at + .microseconds(Int64(((event.milliseconds - origin) * 1000).rounded()))
            let action: Output.Action
            switch event.kind {
            case .closed:
                action = .close
            case .message(.response(let response)):
                guard let anchor, let live = liveRequests[anchor] else { continue }
                action = .reply(.response(answer(response, to: live.request, source: live.source, anchor: anchor)))
            case .message(.request(let request)):
                action = .send(.request(outgoing(request)))
            }
            played.insert(index)
            outputs.append(Output(due: due, action: action, event: index))
        }
        return outputs
    }

    /// A recorded answer to the live request: the live Via (rport and received filled as the server did), From, To
    /// with the recorded to-tag, Call-ID and CSeq; the recorded status and other headers (a REGISTER's Contact
    /// moved to the live one).
    private func answer(
        _ recorded: SIPResponse, to live: SIPRequest, source: SIPEndpoint?, anchor: Int
    ) -> SIPResponse {
        var headers = SIPHeaders()
        var vias = live.headers.splitValues("Via")
        if let source, recorded.headers.topVia?.rport != nil, let first = vias.first,
            var top = try? SIPVia(parsing: first), top.hasRport
        {
            top.parameters.set("rport", String(source.port))
            top.parameters.set("received", source.host)
            vias[0] = top.description
        }
        for via in vias { headers.add("Via", via) }
        if let from = live.headers["From"] { headers.add("From", from) }
        if var to = live.headers.to {
            if to.tag == nil, let tag = recorded.headers.to?.tag { to.tag = tag }
            headers.add("To", to.description)
        }
        if let callID = live.headers["Call-ID"] { headers.add("Call-ID", callID) }
        if let cseq = live.headers["CSeq"] { headers.add("CSeq", cseq) }
        let own: Set<String> = ["Via", "From", "To", "Call-ID", "CSeq", "Content-Length"]
        let recordedContact = script.events[anchor].request?.headers.contacts.first?.uri
        let liveContact = live.headers.contacts.first?.uri
        for field in recorded.headers where !own.contains(field.name) {
            if field.name == "Contact", let recordedContact, let liveContact {
                headers.add("Contact", Self.moved(field.value, from: recordedContact, to: liveContact))
            } else {
                headers.add(field.name, field.value)
            }
        }
        return SIPResponse(
            statusCode: recorded.statusCode, reasonPhrase: recorded.reasonPhrase, headers: headers, body: recorded.body)
    }

    /// A recorded request the server sent: a fresh Via of the peer's own (the same for its retransmissions), the
    /// recorded headers and body, sent to the live Contact when it was sent to the recorded one.
    private mutating func outgoing(_ recorded: SIPRequest) -> SIPRequest {
        let recordedBranch = recorded.headers.topVia?.branch ?? ""
        let branch = freshBranches[recordedBranch] ?? SIPIdentifiers.branch()
        if !recordedBranch.isEmpty { freshBranches[recordedBranch] = branch }
        var headers = SIPHeaders()
        let via = SIPVia(
            transport: local.transport.viaToken, host: local.host, port: local.port,
            parameters: [SIPParameter("branch", branch)])
        headers.add("Via", via.description)
        for field in recorded.headers where field.name != "Via" && field.name != "Content-Length" {
            headers.add(field.name, field.value)
        }
        var uri = recorded.uri
        if let contacts, uri.host == contacts.recorded.host, uri.port == contacts.recorded.port {
            uri = contacts.live
        }
        return SIPRequest(method: recorded.method, uri: uri, headers: headers, body: recorded.body)
    }

    /// A Contact header value with each address the recorded REGISTER named moved to the live one (its parameters,
    /// such as `expires`, kept).
    private static func moved(_ value: String, from recorded: SIPURI, to live: SIPURI) -> String {
        var parts: [String] = []
        for part in SIPHeaders([("Contact", value)]).splitValues("Contact") {
            guard var address = try? SIPNameAddress(parsing: part), address.uri.host == recorded.host,
                address.uri.port == recorded.port
            else {
                parts.append(part)
                continue
            }
            address.uri = live
            parts.append(address.description)
        }
        return parts.joined(separator: ", ")
    }

    /// What ties a response to its request: Call-ID and CSeq (number and method).
    private static func key(_ message: SIPMessage) -> String? {
        guard let callID = message.headers.callID, let cseq = message.headers.cseq else { return nil }
        return "\(callID)|\(cseq.sequence) \(cseq.method.uppercased())"
    }

    private static func key(_ kind: SIPScript.Event.Kind) -> String? {
        if case .message(let message) = kind { key(message) } else { nil }
    }
}
