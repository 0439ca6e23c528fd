import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem

/// Apple's "end-to-end encrypted VoIP calls" path: a decrypted call offer is handed to
/// `reportNewIncomingVoIPPushPayload` of the framework the app uses (CallKit's `CXProvider`, or LiveCommunicationKit's
/// `ConversationManager`), and the alert is silenced with empty content.
///
/// It waits for the host's answer on the thread that serves the request, never on the event loop (a SIP fetch makes
/// its content once the loop's part is done): one wait until the deadline, woken by the host's next message (stdin's
/// `poll`, through `HostLink` once a request is served).
struct CallEscalation: Sendable {
    var device: Device
    var rewriter: Rewriter
    var channel: (any HostConnection)?
    var request: ServiceRequest

    func escalate(_ call: Plaintext.Call, source: String) -> DeliveredContent {
        let maxAge = device.config.voip.maxOfferAge
        if let sentAt = call.sentAt {
            let age = Double(SystemClock.unixMilliseconds()) / 1000 - Double(sentAt)
            if age > maxAge {
                return rewriter.missedCall(
                    call,
                    reason:
                        ReasonCode.staleOffer.reason(
                            "the call offer was sent \(Int(age)) s ago, older than \(Int(maxAge)) s: shown as a missed call"
                        )
                )
            }
        }
        guard let channel else {
            return rewriter.callFallback(
                call, reason: ReasonCode.voipReportUnavailable.reason("no host to report the call to"))
        }
        var payload: JSONObject = [
            "call_uuid": .string(call.callUUID), "from": .string(call.from),
            "handle_type": .string(call.handleType.rawValue),
            "video": .bool(call.video), "source": .string(source),
        ]
        if let name = call.displayName { payload["display_name"] = .string(name) }
        // The SIP call the offer stands for, which the app takes once it has reported it: the sealed offer's own
        // Call-ID, else the one the push names (Flexisip's `call-id`), unless the offer came in a fetched MESSAGE,
        // whose Call-ID that is.
        let pushCallID = source == "sip" ? nil : request.payload["call-id"]?.stringValue
        if let callID = call.sipCallID ?? pushCallID {
            payload["call-id"] = .string(callID)
        }
        if let sentAt = call.sentAt { payload["sent_at"] = .string(SystemClock.rfc3339(unixSeconds: sentAt)) }
        let framework = device.config.voip.framework
        channel.send(.reportVoIP(payload, framework: framework))
        let waitUntil = request.deadlineUnixMilliseconds + 1000
        while true {
            let remaining = waitUntil - SystemClock.unixMilliseconds()
            guard remaining > 0 else { break }
            let message: HostMessage?
            do { message = try channel.next(timeoutMilliseconds: Int32(clamping: remaining)) } catch { break }
            switch message {
            case .reportVoIPResult(nil)?:
                return DeliveredContent(
                    content: [:],
                    reason:
                        ReasonCode.voipEscalated.reason(
                            "call offer from \(source) reported to \(framework.rawValue); alert silenced"),
                    info: ["content_type": "call", "source": .string(source)])
            case .reportVoIPResult(let error?)?:
                return rewriter.callFallback(call, reason: ReasonCode.voipReportFailed.reason("\(error)"))
            case .timeWillExpire?:
                return rewriter.callFallback(
                    call, reason: ReasonCode.timeWillExpire.reason("no answer to the VoIP report"))
            case .request?, .contentAccepted?, .addNotificationResult?:
                continue
            case nil:
                // The host closed the pipe, or the deadline passed (seen above).
                if channel.isClosed {
                    return rewriter.callFallback(
                        call, reason: ReasonCode.voipReportFailed.reason("the host closed the pipe"))
                }
                continue
            }
        }
        return rewriter.callFallback(call, reason: ReasonCode.voipReportFailed.reason("the host did not answer"))
    }
}
