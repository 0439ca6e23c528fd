public import NSEDevice
import NSEJSON
public import NSEPayload

/// An APNs error: the HTTP status and the `reason` APNs puts in its JSON body.
public struct APNsError: Error, Sendable, Equatable {
    public var status: Int
    public var reason: String
    /// For 410: since when the token is invalid (Unix milliseconds).
    public var timestamp: Int64?

    public init(_ status: Int, _ reason: String, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
    }

    static func badRequest(_ reason: String) -> APNsError { APNsError(400, reason) }
    public static let badPath = APNsError(404, "BadPath")
    public static let methodNotAllowed = APNsError(405, "MethodNotAllowed")
    public static let payloadTooLarge = APNsError(413, "PayloadTooLarge")
    public static let tooManyRequests = APNsError(429, "TooManyRequests")
    public static let shutdown = APNsError(503, "Shutdown")
    /// It cannot take the push now (a fleet's node that cannot be reached, a device moving between nodes): retry.
    public static let serviceUnavailable = APNsError(503, "ServiceUnavailable")
    /// The push could not be recorded (the disk is full, the results database read-only): not accepted, retry.
    public static let internalServerError = APNsError(500, "InternalServerError")
}

/// Which of a device's tokens a push was addressed to.
public enum TokenKind: String, Sendable {
    /// The app's remote-notification token (alert and background pushes).
    case remote
    /// The app's PushKit token (voip pushes).
    case voip
    /// A Live Activity's push token, a push-to-start token, or (for a broadcast) the activity a channel reaches
    /// (liveactivity pushes; docs/serve.md, "Live Activities").
    case liveActivity = "live-activity"
}

/// A push APNs accepted: what goes to the device.
public struct AcceptedPush: Sendable {
    public var apnsID: String
    public var token: String
    public var tokenKind: TokenKind
    public var pushType: PushType
    public var priority: Int
    public var payload: [UInt8]
    /// `apns-expiration` (Unix seconds; 0 = now or never), if given.
    public var expiration: Int64? = nil
    /// `apns-collapse-id`, if given.
    public var collapseID: String? = nil

    public init(
        apnsID: String, token: String, tokenKind: TokenKind, pushType: PushType, priority: Int, payload: [UInt8],
        expiration: Int64? = nil, collapseID: String? = nil
    ) {
        self.apnsID = apnsID
        self.token = token
        self.tokenKind = tokenKind
        self.pushType = pushType
        self.priority = priority
        self.payload = payload
        self.expiration = expiration
        self.collapseID = collapseID
    }
}

/// The headers of one `POST /3/device/{token}`, lower-cased names, in the order received.
public typealias APNsHeaders = [(name: String, value: String)]

/// APNs's request rules, in the order APNs applies them. Pure: no I/O, so every rule is testable alone.
public enum APNsValidation {
    /// Every `apns-push-type` APNs knows; nse delivers `alert`, `background`, `voip` and `liveactivity`.
    public static let knownPushTypes: [String: String] = [
        "alert": "", "background": "", "voip": ".voip", "complication": ".complication",
        "fileprovider": ".pushkit.fileprovider", "location": ".location-query",
        "liveactivity": ".push-type.liveactivity",
        "pushtotalk": ".voip-ptt", "mdm": "", "widgets": ".push-type.widgets", "controls": ".push-type.controls",
    ]
    /// The `apns-collapse-id` limit, in bytes.
    public static let maxCollapseIDBytes = 64

    /// Whether `text` has a device token's form, 1 to 200 hex digits: what nse looks up as a token, asks another
    /// node of a fleet about, or puts in a path.
    static func isTokenShaped(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.count <= 200 && text.allSatisfy(\.isHexDigit)
    }

    /// Checks a push against APNs's rules and the registered devices.
    /// - Parameters:
    ///   - token: the `{token}` path component.
    ///   - headers: the request's headers.
    ///   - body: the payload, or `nil` when it was over the largest limit (5120 bytes).
    ///   - device: finds the device owning a token.
    ///   - newID: makes a lowercase UUID for a push without `apns-id`.
    ///   - teamID: with token authentication, the team the provider token names: the app must be that team's.
    ///   - certificateBundleID: with certificate authentication, the app the client certificate names: the topic
    ///     must be one of its topics, and a push without `apns-topic` goes to it.
    public static func validate(
        token: String, headers: APNsHeaders, body: [UInt8]?, device: (String) -> Device?, newID: () -> String,
        teamID: String? = nil, certificateBundleID: String? = nil
    ) -> Result<(AcceptedPush, Device), APNsError> {
        // DuplicateHeaders: any apns-* header more than once.
        var seen = Set<String>()
        for header in headers where header.name.hasPrefix("apns-") {
            if !seen.insert(header.name).inserted { return .failure(.badRequest("DuplicateHeaders")) }
        }
        func value(_ name: String) -> String? { headers.first(where: { $0.name == name })?.value }

        let apnsID: String
        if let given = value("apns-id") {
            guard isUUID(given) else { return .failure(.badRequest("BadMessageId")) }
            apnsID = given
        } else {
            apnsID = newID()
        }
        guard !token.isEmpty else { return .failure(.badRequest("MissingDeviceToken")) }
        guard token.allSatisfy(\.isHexDigit), let device = device(token) else {
            return .failure(.badRequest("BadDeviceToken"))
        }
        let kind: TokenKind =
            switch token.lowercased() {
            case device.config.remoteToken.lowercased(): .remote
            case device.config.voipToken.lowercased(): .voip
            default: .liveActivity
            }

        let topic = value("apns-topic")
        let typeName = pushTypeName(headers)
        guard let suffix = knownPushTypes[typeName] else { return .failure(.badRequest("InvalidPushType")) }

        // With a certificate, APNs takes the topic from it when the request names none.
        guard let topic = topic ?? certificateBundleID.map({ $0 + suffix }) else {
            return .failure(.badRequest("MissingTopic"))
        }
        guard !topic.isEmpty, topic.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.badRequest("BadTopic"))
        }
        if let certificateBundleID, topic != certificateBundleID, !topic.hasPrefix(certificateBundleID + ".") {
            return .failure(.badRequest("TopicDisallowed"))
        }

        let priority: Int
        if let text = value("apns-priority") {
            guard let parsed = Int(text), [10, 5, 1].contains(parsed) else {
                return .failure(.badRequest("BadPriority"))
            }
            priority = parsed
        } else {
            priority = defaultPriority(pushTypeName: typeName)
        }
        var expiration: Int64?
        if let text = value("apns-expiration") {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let parsed = Int64(text) else {
                return .failure(.badRequest("BadExpirationDate"))
            }
            expiration = parsed
        }
        let collapseID = value("apns-collapse-id")
        if let collapse = collapseID, collapse.utf8.count > maxCollapseIDBytes {
            return .failure(.badRequest("BadCollapseId"))
        }

        // The topic must be this app's topic for the push type, and the token the one for that topic.
        let bundleID = device.config.bundleID
        guard topic == bundleID || topic.hasPrefix(bundleID + ".") else {
            return .failure(.badRequest("DeviceTokenNotForTopic"))
        }
        guard topic == bundleID + suffix else { return .failure(.badRequest("BadTopic")) }
        let pushType: PushType
        switch (typeName, kind) {
        case ("alert", .remote): pushType = .alert
        case ("background", .remote): pushType = .background
        case ("voip", .voip): pushType = .voip
        case ("liveactivity", .liveActivity): pushType = .liveactivity
        default: return .failure(.badRequest("DeviceTokenNotForTopic"))
        }
        if let teamID, device.config.teamID != teamID { return .failure(.badRequest("TopicDisallowed")) }
        if let since = device.config.uninstalledAt { return .failure(APNsError(410, "Unregistered", timestamp: since)) }

        guard let body else { return .failure(.payloadTooLarge) }
        guard !body.isEmpty else { return .failure(.badRequest("PayloadEmpty")) }
        guard body.count <= pushType.payloadLimit else { return .failure(.payloadTooLarge) }

        if pushType == .background && priority != 5 { return .failure(.badRequest("BadPriority")) }
        if priority == 10 && isContentAvailableOnly(body) { return .failure(.badRequest("BadPriority")) }

        let push = AcceptedPush(
            apnsID: apnsID, token: token, tokenKind: kind, pushType: pushType, priority: priority, payload: body,
            expiration: expiration, collapseID: collapseID)
        return .success((push, device))
    }

    /// The push type a request asks for, known to APNs or not: its `apns-push-type`; absent, `voip` for a `.voip`
    /// topic (as APNs infers), else `alert`.
    static func pushTypeName(_ headers: APNsHeaders) -> String {
        func value(_ name: String) -> String? { headers.first(where: { $0.name == name })?.value }
        return value("apns-push-type") ?? ((value("apns-topic")?.hasSuffix(".voip") ?? false) ? "voip" : "alert")
    }

    /// The priority of a push without `apns-priority`: 5 for a background push, else 10.
    static func defaultPriority(pushTypeName: String) -> Int {
        pushTypeName == "background" ? 5 : 10
    }

    /// `8-4-4-4-12` hex digits, either case.
    public static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
        return groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// Whether the payload's `aps` has `content-available` and nothing the user would see or hear.
    static func isContentAvailableOnly(_ body: [UInt8]) -> Bool {
        guard let aps = (try? JSON.parse(body))?["aps"]?.objectValue, aps["content-available"] != nil else {
            return false
        }
        return aps["alert"] == nil && aps["sound"] == nil && aps["badge"] == nil
    }
}
