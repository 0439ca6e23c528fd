import Logging
import NSESIP

/// The inbound path: what the listeners bring in is matched to a transaction (a response to the `Forwarder`, a
/// request's retransmission absorbed), checked (`ServerResponse`, `SIPFaultPlan`) and handed to the REGISTER or
/// MESSAGE path; every answer goes out through `respond`.
extension SIPServer {
    func process(_ event: InboundEvent) async {
        guard !isStopped else { return }
        switch event {
        case .datagram(let message, let flow):
            if faults.dropsDatagram() {
                logger.debug(
                    "sip server dropping datagram (fault knob)", metadata: ["sip.count": "\(faults.datagramCount)"])
                return
            }
            if let message { dispatch(message, flow: flow) }
        case .message(let message, let flow):
            dispatch(message, flow: flow)
        }
    }

    private func dispatch(_ message: SIPMessage, flow: ServerFlow) {
        switch message {
        case .response(let response):
            // The top Via's branch names the client transaction; parsed once for the three that may own it.
            let branch = response.headers.topVia?.branch
            if handleRoomResponse(response, branch: branch) { return }
            if handleCallResponse(response, branch: branch) { return }
            if let outcome = forwarder.answer(response, branch: branch) { record(outcome) }
        case .request(let request):
            if request.method.uppercased() == "ACK" {
                // Not a transaction of its own: it ends the server's answer to an INVITE, or goes on in a dialog.
                // One with a control character in a header is dropped (it cannot be answered).
                if request.headers.firstInvalidField == nil { handleAck(request, flow: flow) }
                return
            }
            var metadata: Logger.Metadata = ["sip.method": "\(request.method)"]
            // A Call-ID with control characters is refused below; it is never logged.
            if request.headers.firstInvalidField == nil { metadata["sip.call_id"] = "\(request.headers.callID ?? "")" }
            let log = logger.adding(metadata)
            let key: String
            switch serverTransactions.receive(request) {
            case .retransmission(let stored):
                log.debug("sip server absorbed retransmission")
                if let stored { flow.send(stored) }
                return
            case .new(let k):
                key = k
            }
            switch faults.arrival(of: request) {
            case .handle:
                handleRequest(request, flow: flow, transactionKey: key)
            case .ignore:
                log.debug("sip server ignoring request (neverAnswer)")
            case .delay(let delay):
                spawn { [weak self] in
                    do { try await Task.sleep(for: delay) } catch { return }
                    await self?.handleRequest(request, flow: flow, transactionKey: key)
                }
            }
        }
    }

    private func handleRequest(_ request: SIPRequest, flow: ServerFlow, transactionKey: String) {
        guard !isStopped else { return }
        let method = request.method.uppercased()
        if let refusal = ServerResponse.refusal(of: request) {
            if let field = request.headers.firstInvalidField {
                logger.info(
                    "sip server refused a request with a control character in a header",
                    metadata: [
                        "sip.method": "\(method)", "sip.header": "\(field)",
                    ])
            }
            respond(request, flow: flow, transactionKey: transactionKey, status: refusal.status, reason: refusal.reason)
            return
        }
        switch faults.answer(for: method, over: flow.kind) {
        case nil:
            break
        case .closeConnection:
            logger.debug(
                "sip server closing connection after REGISTER (fault knob)", metadata: ["sip.method": "REGISTER"])
            flow.close()
            return
        case .serviceUnavailable:
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 503, extraHeaders: [("Retry-After", "5")])
            return
        case .challenge:
            let realm = configuration.realm ?? request.headers.to?.uri.host ?? "nse"
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 401,
                extraHeaders: registrar.challengeHeaders(realm: realm, stale: false))
            return
        }
        if method != "CANCEL", isInDialog(request) {
            handleInDialog(request, flow: flow, transactionKey: transactionKey)
            return
        }
        if let target = roomTarget(of: request) {
            handleRoomRequest(request, target: target, flow: flow, transactionKey: transactionKey)
            return
        }
        switch method {
        case "REGISTER": handleRegister(request, flow: flow, transactionKey: transactionKey)
        case "MESSAGE": handleMessage(request, flow: flow, transactionKey: transactionKey)
        case "INVITE": handleInvite(request, flow: flow, transactionKey: transactionKey)
        case "CANCEL": handleCancel(request, flow: flow, transactionKey: transactionKey)
        case "BYE": respond(request, flow: flow, transactionKey: transactionKey, status: 481)
        case "OPTIONS":
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 200,
                extraHeaders: [("Allow", Self.allowedMethods)])
        default:
            respond(
                request, flow: flow, transactionKey: transactionKey, status: 501,
                extraHeaders: [("Allow", Self.allowedMethods)])
        }
    }

    /// The methods the server takes outside a dialog (`Allow`).
    static let allowedMethods = "REGISTER, MESSAGE, OPTIONS, INVITE, ACK, CANCEL, BYE"

    /// Sends a final (or provisional) response on the request's flow and remembers it for retransmissions.
    func respond(
        _ request: SIPRequest, flow: ServerFlow, transactionKey: String, status: Int, reason: String? = nil,
        extraHeaders: [(String, String)] = [], contacts: [String] = []
    ) {
        let bytes = ServerResponse.make(
            to: request, over: flow, status: status, reason: reason, extraHeaders: extraHeaders,
            contacts: contacts, serverHeader: configuration.serverHeader
        ).serialized()
        // The latest answer, provisional ones too: a retransmitted request gets it again (RFC 3261 §17.2.1, §17.2.2;
        // a caller whose 100 Trying was lost retransmits its INVITE until it hears one).
        serverTransactions.store(response: bytes, for: transactionKey)
        flow.send(bytes)
        if status >= 200 {
            // A refused Call-ID with control characters is not repeated in events either.
            let callID = request.headers.firstInvalidField == nil ? request.headers.callID ?? "" : ""
            emit(.answered(method: request.method.uppercased(), callID: callID, status: status))
        }
    }
}
