/// APNs's rules for `POST /4/broadcasts/apps/{bundle}`, before the channel is looked up, in the order nse applies
/// them. Pure, as ``APNsValidation`` is, so each rule is testable alone. Providers' reports of Apple's answers (no
/// `apns-topic`, `apns-expiration` required, 5 KB payloads) are in docs/serve.md, "Broadcast channels".
enum BroadcastValidation {
    /// The broadcast payload limit, in bytes.
    static let maxPayloadBytes = 5120

    /// A broadcast whose headers and body pass.
    struct Request: Sendable, Equatable {
        var requestID: String
        var channelID: String
        var priority: Int
        var expiration: Int64
        var collapseID: String?
    }

    /// The request id every answer carries: the request's `apns-request-id` when it is a UUID, else a new one.
    static func requestID(_ headers: APNsHeaders, newID: () -> String) -> String {
        headers.first(where: { $0.name == "apns-request-id" }).map(\.value).flatMap {
            APNsValidation.isUUID($0) ? $0 : nil
        } ?? newID()
    }

    static func validate(headers: APNsHeaders, body: [UInt8]?, newID: () -> String) -> Result<Request, APNsError> {
        var seen = Set<String>()
        for header in headers where header.name.hasPrefix("apns-") {
            if !seen.insert(header.name).inserted { return .failure(.badRequest("DuplicateHeaders")) }
        }
        func value(_ name: String) -> String? { headers.first(where: { $0.name == name })?.value }
        if let given = value("apns-request-id"), !APNsValidation.isUUID(given) {
            return .failure(.badRequest("BadMessageId"))
        }
        guard let type = value("apns-push-type") else { return .failure(.badRequest("MissingPushType")) }
        guard type == "liveactivity" else { return .failure(.badRequest("InvalidPushType")) }
        guard let channelID = value("apns-channel-id") else { return .failure(.badRequest("MissingChannelId")) }
        guard BroadcastChannel.isWellFormed(channelID) else { return .failure(.badRequest("BadChannelId")) }
        var priority = 10
        if let text = value("apns-priority") {
            guard let parsed = Int(text), [10, 5, 1].contains(parsed) else {
                return .failure(.badRequest("BadPriority"))
            }
            priority = parsed
        }
        guard let text = value("apns-expiration"), !text.isEmpty,
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let expiration = Int64(text)
        else { return .failure(.badRequest("BadExpirationDate")) }
        let collapseID = value("apns-collapse-id")
        if let collapseID, collapseID.utf8.count > APNsValidation.maxCollapseIDBytes {
            return .failure(.badRequest("BadCollapseId"))
        }
        guard let body else { return .failure(.payloadTooLarge) }
        guard !body.isEmpty else { return .failure(.badRequest("PayloadEmpty")) }
        guard body.count <= maxPayloadBytes else { return .failure(.payloadTooLarge) }
        return .success(
            Request(
                requestID: requestID(headers, newID: newID), channelID: channelID, priority: priority,
                expiration: expiration, collapseID: collapseID))
    }
}
