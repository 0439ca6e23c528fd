public import NSEJSON
public import NSEPayload

/// What the extension is asked to process.
public struct ServiceRequest: Sendable, Equatable {
    public var requestID: String
    /// `UNNotificationRequest.identifier`: the push's `apns-collapse-id` when it had one (iOS's identifier for a
    /// remote notification), else the request ID.
    public var identifier: String
    public var pushType: PushType
    /// The notification's payload (`request.content.userInfo`, with `aps`).
    public var payload: JSONObject
    /// The App Group container (the device folder).
    public var container: String
    public var budgetMilliseconds: Int64
    /// When the budget runs out, in Unix milliseconds.
    public var deadlineUnixMilliseconds: Int64
    /// Whether the host records the extension's SIP exchange for a replay case (`record_sip`; `nse serve --record`),
    /// and how much of it; nil: not recorded. Extensions that fetch nothing over SIP ignore it.
    public var recordSIP: SIPRecordingMode? = nil

    public init(
        requestID: String, identifier: String? = nil, pushType: PushType, payload: JSONObject, container: String,
        budgetMilliseconds: Int64,
        deadlineUnixMilliseconds: Int64
    ) {
        self.requestID = requestID
        self.identifier = identifier ?? requestID
        self.pushType = pushType
        self.payload = payload
        self.container = container
        self.budgetMilliseconds = budgetMilliseconds
        self.deadlineUnixMilliseconds = deadlineUnixMilliseconds
    }
}

/// How much of its SIP exchange an extension records for a replay case (docs/replay.md).
public enum SIPRecordingMode: String, Sendable, Equatable, CaseIterable, JSONConvertible {
    /// Credentials redacted, and plain-text bodies the lock screen does not show replaced by their length.
    case sealed
    /// Only credentials redacted (`--record-plaintext`: unsafe).
    case plaintext
}
