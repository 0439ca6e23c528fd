public import NSEDevice
import NSEJSON
public import NSEPayload
public import NSESIP

/// A MESSAGE as the main app shows it in the foreground (`nse app`): opened the way the extension opens a fetched
/// one (a sealed envelope, CPIM, plain text), with the IMDN its sender asked for.
public struct InAppMessage: Sendable {
    public var callID: String
    public var from: String
    /// What the app shows (the rewritten alert's lines).
    public var display: Display
    /// Why it shows that (the extension's reason prefix: `decrypted`, `envelope-wrong-key`…), never the content.
    public var reason: String?
    /// The delivery notification to send: its recipient and CPIM body.
    public var notice: (to: String, body: [UInt8])?

    /// Opens a MESSAGE received over SIP.
    public init(_ message: SIPReceivedMessage, device: Device, recipient: String) {
        self.init(ReceivedContent(message), device: device, recipient: recipient)
    }

    /// Opens a message an extension kept in the App Group store for a later push.
    public init(_ stored: StoredMessage, device: Device, recipient: String) {
        self.init(ReceivedContent(stored), device: device, recipient: recipient)
    }

    private init(_ received: ReceivedContent, device: Device, recipient: String) {
        let (strings, _) = device.strings()
        let rewriter = Rewriter(payload: Payload(root: [:]), strings: strings)
        // The app has no push request: an offer for a call inside a MESSAGE is shown, not reported.
        let request = ServiceRequest(
            requestID: "in-app", pushType: .alert, payload: [:], container: device.directory, budgetMilliseconds: 0,
            deadlineUnixMilliseconds: 0)
        let (content, _) = SIPFetch(device: device, rewriter: rewriter, host: nil).content(
            for: received, request: request)
        callID = received.callID
        from = received.from
        display = Display(alert: Payload(root: content.content).aps.alert, strings: strings)
        reason = content.reason.map { String($0.split(separator: ":", maxSplits: 1).first ?? "") }
        notice = received.deliveryNotice(recipient: recipient)
    }
}
