import NSEJSON
import NSESIP

/// The SIP exchange of a fetch as `info.sip_exchange` carries it (docs/protocol.md, `record_sip`): the trace of its
/// user agent, redacted here, before anything leaves the process.
///
/// Credentials (`Authorization`, `Proxy-Authorization`) never leave; in `sealed` mode neither does the body of a
/// received MESSAGE that is not a sealed envelope, unless it is the push's own (what the lock screen shows). A body
/// that is not UTF-8 cannot be JSON text and is replaced in either mode. The whole stays well under the protocol's
/// 64 KiB line: events past ``maxBytes`` are left out and counted (`truncated`), as are those the trace dropped.
struct SIPExchange {
    /// How much of the exchange the host asked for.
    var mode: SIPRecordingMode
    /// The push's own Call-ID: its message keeps its body.
    var callID: String

    /// The most bytes of events kept: the content's line must stay under ``ExtensionProtocol/maxLineBytes``.
    static let maxBytes = 40 * 1024

    /// `{"transport", "events": [{"at_ms", "direction", "message" | "closed"}], "truncated"?}`.
    func json(_ trace: SIPTrace, transport: String?) -> JSONObject {
        var events: [JSON] = []
        var size = 0
        let all = trace.events
        for (index, event) in all.enumerated() {
            guard let entry = json(event) else {
                return document(transport ?? trace.transport?.rawValue, events, left: all.count - index + trace.dropped)
            }
            size += JSON.object(entry).serializedBytes().count
            guard size <= Self.maxBytes else {
                return document(transport ?? trace.transport?.rawValue, events, left: all.count - index + trace.dropped)
            }
            events.append(.object(entry))
        }
        return document(transport ?? trace.transport?.rawValue, events, left: trace.dropped)
    }

    private func document(_ transport: String?, _ events: [JSON], left: Int) -> JSONObject {
        var object: JSONObject = ["transport": JSON.string(transport), "events": .array(events)]
        if left > 0 { object["truncated"] = .int(Int64(left)) }
        return object
    }

    /// One event; nil for a message that cannot be kept whole (cut by the trace's bound, or not a SIP message).
    private func json(_ event: SIPTrace.Event) -> JSONObject? {
        let at = JSON.double(event.milliseconds)
        switch event.kind {
        case .closed:
            return ["at_ms": at, "direction": "received", "closed": true]
        case .sent(let bytes), .received(let bytes):
            var received = false
            if case .received = event.kind { received = true }
            guard !event.truncated, let text = redacted(bytes, received: received) else { return nil }
            return ["at_ms": at, "direction": received ? "received" : "sent", "message": .string(text)]
        }
    }

    /// A message's text with what may not leave the process replaced; nil when it is not a SIP message.
    func redacted(_ bytes: [UInt8], received: Bool) -> String? {
        guard let message = try? SIPParser.parseDatagram(bytes) else { return nil }
        var headers = SIPHeaders()
        // Field names are stored canonical (`SIPHeaders.canonicalName`): one spelling each.
        for field in message.headers {
            let credential = field.name == "Authorization" || field.name == "Proxy-Authorization"
            headers.add(field.name, credential ? "[redacted]" : field.value)
        }
        var body = message.body
        if String(validating: body, as: UTF8.self) == nil || (received && hidesBody(of: message)) {
            body = Array("[redacted: \(message.body.count) bytes]".utf8)
        }
        let kept: SIPMessage
        switch message {
        case .request(var request):
            request.headers = headers
            request.body = body
            kept = .request(request)
        case .response(var response):
            response.headers = headers
            response.body = body
            kept = .response(response)
        }
        return String(decoding: kept.serialized(), as: UTF8.self)
    }

    /// Whether a received message's body stays in the process: in `sealed` mode, a MESSAGE's that is neither a sealed
    /// envelope nor the push's own.
    private func hidesBody(of message: SIPMessage) -> Bool {
        guard mode == .sealed, case .request(let request) = message, request.method.uppercased() == "MESSAGE",
            !request.body.isEmpty, request.headers.callID != callID
        else { return false }
        let type = (request.headers.contentType ?? "text/plain").lowercased()
        return !ReceivedContent.isSealedEnvelope(type: type, body: request.body)
    }
}
