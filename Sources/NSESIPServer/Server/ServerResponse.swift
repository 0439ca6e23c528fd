import NSESIP

/// The server's answers to requests: which requests it refuses as malformed, and how a response is built.
enum ServerResponse {
    /// The status and reason phrase refusing a malformed request, or nil when it is well formed.
    ///
    /// RFC 3261's grammar allows no control characters in header values (folding is undone by the parser). Such a
    /// value would reach the device in a forwarded MESSAGE and break whatever reads it there, so the request is
    /// refused; the reason names the header, never its value.
    static func refusal(of request: SIPRequest) -> (status: Int, reason: String?)? {
        if let field = request.headers.firstInvalidField { return (400, invalidHeaderReason(field)) }
        guard request.headers.callID != nil, request.headers.cseq != nil, request.headers.topVia != nil,
            request.headers.from != nil, request.headers.to != nil
        else { return (400, nil) }
        return nil
    }

    /// The response to `request` received over `flow`, with RFC 3581 `received`/`rport` on the top Via.
    static func make(
        to request: SIPRequest, over flow: ServerFlow, status: Int, reason: String?,
        extraHeaders: [(String, String)], contacts: [String], serverHeader: String?
    ) -> SIPResponse {
        var response = request.makeResponse(
            statusCode: status, reasonPhrase: reason,
            toTag: status == 100 ? nil : toTag(for: request))
        let vias = request.headers.splitValues("Via")
        if var top = vias.first.flatMap({ try? SIPVia(parsing: $0) }) {
            top.parameters.set("received", flow.remoteHost)
            if top.hasRport { top.parameters.set("rport", String(flow.remotePort)) }
            response.headers.remove("Via")
            var all = [top.description]
            all.append(contentsOf: vias.dropFirst())
            for v in all.reversed() { response.headers.prepend("Via", v) }
        }
        for c in contacts { response.headers.add("Contact", c) }
        for (name, value) in extraHeaders { response.headers.add(name, value) }
        if let serverHeader { response.headers.add("Server", serverHeader) }
        return response
    }

    /// `Invalid NAME Header`, or `Invalid Header` when the name has characters a reason phrase cannot carry as is.
    static func invalidHeaderReason(_ name: String) -> String {
        let plain =
            !name.isEmpty
            && name.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D
                    || b == 0x2E || b == 0x5F
            }
        return plain ? "Invalid \(name) Header" : "Invalid Header"
    }

    /// A stable To tag per transaction so retransmitted answers match.
    private static func toTag(for request: SIPRequest) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in (request.headers.callID ?? "").utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        for b in (request.headers.from?.tag ?? "").utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return String(h, radix: 16)
    }
}
