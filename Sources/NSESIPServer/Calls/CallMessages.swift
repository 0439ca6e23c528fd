import NSESIP

/// The requests and responses the server builds or rewrites on a call's path (RFC 3261 §16.6 request
/// forwarding, §16.7 response processing, §9.1 CANCEL, §17.1.1.3 the ACK of a non-2xx answer).
enum CallMessages {
    /// The server's Via on a request it sends over `flow`.
    static func via(over flow: ServerFlow, branch: String) -> String {
        SIPVia(
            transport: flow.kind.viaToken, host: flow.localHost, port: flow.localPort,
            parameters: [SIPParameter("branch", branch)]
        ).description
    }

    /// The Record-Route naming the server's side of `flow` (loose routing).
    static func recordRoute(over flow: ServerFlow) -> String {
        SIPNameAddress(
            uri: SIPURI(
                host: flow.localHost, port: flow.localPort,
                parameters: [SIPParameter("transport", flow.kind.rawValue), SIPParameter("lr")])
        ).description
    }

    /// The caller's INVITE as the server sends it to a device: the device's contact as Request-URI, the server's
    /// Via on top, one hop fewer, and the server in the route set, once per side when the caller and the device
    /// reach it over different listeners (RFC 5658), so that each sends its in-dialog requests where it can.
    static func forwardedInvite(
        _ invite: SIPRequest, to contact: SIPURI, over flow: ServerFlow, from callerFlow: ServerFlow, branch: String
    ) -> SIPRequest {
        var request = invite
        request.uri = contact
        request.headers.prepend("Via", via(over: flow, branch: branch))
        request.headers.set("Max-Forwards", String(max(0, (maxForwards(invite) ?? 70) - 1)))
        if callerFlow.kind != flow.kind || callerFlow.localPort != flow.localPort {
            request.headers.prepend("Record-Route", recordRoute(over: callerFlow))
        }
        request.headers.prepend("Record-Route", recordRoute(over: flow))
        return request
    }

    /// The ACK of a device's non-2xx answer to the server's INVITE: the same branch and Request-URI, the answer's
    /// To (with its tag).
    static func ack(of invite: SIPRequest, answer: SIPResponse) -> SIPRequest {
        var ack = hopRequest("ACK", of: invite)
        if let to = answer.headers["To"] { ack.headers.set("To", to) }
        return ack
    }

    /// The CANCEL of the server's INVITE to a device: the same branch, Request-URI, From, To and CSeq number, and
    /// a `Reason` header (RFC 3326) when there is one to give.
    static func cancel(of invite: SIPRequest, reason: String? = nil) -> SIPRequest {
        var cancel = hopRequest("CANCEL", of: invite)
        if let reason { cancel.headers.add("Reason", reason) }
        return cancel
    }

    /// A request of the dialog a device's late 2xx set up after the server had given up on it (ACK, then BYE):
    /// sent straight to the device's contact, as the caller it stands for.
    static func dialogRequest(
        _ method: String, of invite: SIPRequest, answer: SIPResponse, over flow: ServerFlow, sequence: UInt32
    ) -> SIPRequest {
        let target = answer.headers.contacts.first?.uri ?? invite.uri
        var request = SIPRequest(method: method, uri: target)
        request.headers.add("Via", via(over: flow, branch: SIPIdentifiers.branch()))
        request.headers.add("Max-Forwards", "70")
        if let from = invite.headers["From"] { request.headers.add("From", from) }
        if let to = answer.headers["To"] { request.headers.add("To", to) }
        if let callID = invite.headers["Call-ID"] { request.headers.add("Call-ID", callID) }
        request.headers.add("CSeq", SIPCSeq(sequence: sequence, method: method).description)
        return request
    }

    /// An in-dialog request passed on over `flow`: the server's own Route entries taken off the top, its Via
    /// added, one hop fewer.
    static func relayed(
        _ request: SIPRequest, over flow: ServerFlow, branch: String, isOwnRoute: (SIPURI) -> Bool
    ) -> SIPRequest {
        var relayed = request
        let routes = request.headers.splitValues("Route")
        let kept = routes.drop { text in
            (try? SIPNameAddress(parsing: text)).map { isOwnRoute($0.uri) } ?? false
        }
        if kept.count != routes.count {
            relayed.headers.remove("Route")
            for route in kept { relayed.headers.add("Route", route) }
        }
        relayed.headers.prepend("Via", via(over: flow, branch: branch))
        relayed.headers.set("Max-Forwards", String(max(0, (maxForwards(request) ?? 70) - 1)))
        return relayed
    }

    /// A response passed back toward the caller (or the sender of a relayed request): the server's Via removed.
    static func withoutTopVia(_ response: SIPResponse) -> SIPResponse {
        var passed = response
        let vias = response.headers.splitValues("Via")
        passed.headers.remove("Via")
        for via in vias.dropFirst().reversed() { passed.headers.prepend("Via", via) }
        return passed
    }

    /// The Max-Forwards value of a request, nil when absent or not a number.
    static func maxForwards(_ request: SIPRequest) -> Int? {
        request.headers["Max-Forwards"].flatMap { Int(String($0.filter { $0 != " " && $0 != "\t" })) }
    }

    /// A request of the same client transaction as `invite` (its ACK or CANCEL): only its top Via, the same
    /// Request-URI, From, To, Call-ID and Route, and its CSeq number with `method`.
    private static func hopRequest(_ method: String, of invite: SIPRequest) -> SIPRequest {
        var request = SIPRequest(method: method, uri: invite.uri)
        if let top = invite.headers.splitValues("Via").first { request.headers.add("Via", top) }
        request.headers.add("Max-Forwards", "70")
        for name in ["From", "To", "Call-ID"] {
            if let value = invite.headers[name] { request.headers.add(name, value) }
        }
        let sequence = invite.headers.cseq?.sequence ?? 1
        request.headers.add("CSeq", SIPCSeq(sequence: sequence, method: method).description)
        for route in invite.headers.values("Route") { request.headers.add("Route", route) }
        return request
    }
}
