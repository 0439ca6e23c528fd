import Hummingbird
import Logging
import NIOCore
import NSEJSON

/// APNs's channel-management API (iOS 18 broadcasts), under `/1/apps/{bundle}`:
///
/// - `POST channels` with `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`: 201, the new id in
///   `apns-channel-id`, no body (400 `CannotCreateChannelConfig` past the app's limit).
/// - `GET channels` with `apns-channel-id`: 200 `{"message-storage-policy", "push-type"}`.
/// - `DELETE channels` with `apns-channel-id`: 204 (404 `BadPath` for a channel it no longer has, as APNs answers).
/// - `GET all-channels`: 200 `{"channels": […]}`.
///
/// Every answer carries `apns-request-id`. APNs serves this on a host of its own
/// (`api-manage-broadcast.sandbox.push.apple.com:2195`, `:2196` in production); nse serves it on its listeners
/// beside `/3/device`: the paths tell them apart. The same provider checks apply (``ProviderIdentity``).
struct ChannelController {
    let service: PushService

    /// What a request asks for, as the metrics count it.
    enum Operation: String, Sendable {
        case create, read, delete, list
    }

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .post(":bundle/channels") { request, context in await handle(.create, request, context) }
            .get(":bundle/channels") { request, context in await handle(.read, request, context) }
            .delete(":bundle/channels") { request, context in await handle(.delete, request, context) }
            .get(":bundle/all-channels") { request, context in await handle(.list, request, context) }
    }

    private func handle(_ operation: Operation, _ request: Request, _ context: PushRequestContext) async -> Response {
        let bundleID = context.parameters.get("bundle") ?? ""
        let headers = request.apnsHeaders
        let body = try? await request.body.collect(upTo: 4096)
        let requestID = BroadcastValidation.requestID(headers, newID: PushService.newAPNsID)
        let (response, reason) = await answer(
            operation, body: body.map { Array($0.readableBytesView) }, bundleID: bundleID, headers: headers,
            requestID: requestID, context: context)
        service.metrics.channelAnswered(operation.rawValue, status: response.status.code, reason: reason)
        return response
    }

    private func answer(
        _ operation: Operation, body: [UInt8]?, bundleID: String, headers: APNsHeaders, requestID: String,
        context: PushRequestContext
    ) async -> (Response, String?) {
        func refused(_ error: APNsError) -> (Response, String?) {
            (BroadcastController.error(error, requestID: requestID), error.reason)
        }
        if let unavailable = await service.channelsUnavailable() { return refused(unavailable) }
        switch await ProviderIdentity.authenticate(headers: headers, service: service, context: context) {
        case .failure(let error): return refused(error)
        case .success(let provider):
            if let refusal = provider.check(bundleID, devices: service.devices) { return refused(refusal) }
        }
        if let given = headers.first(where: { $0.name == "apns-request-id" })?.value, !APNsValidation.isUUID(given) {
            return refused(.badRequest("BadMessageId"))
        }
        let environment = service.environment.rawValue
        let channelID = headers.first(where: { $0.name == "apns-channel-id" })?.value
        var fields = HTTPFields()
        fields[.init("apns-request-id")!] = requestID
        do throws(Broadcasts.Failure) {
            switch operation {
            case .create:
                let policy: BroadcastChannel.StoragePolicy
                switch Self.creation(body) {
                case .failure(let error): return refused(error)
                case .success(let asked): policy = asked
                }
                guard
                    let channel = try await service.broadcasts.create(
                        bundleID: bundleID, environment: environment, policy: policy)
                else { return refused(.badRequest("CannotCreateChannelConfig")) }
                fields[.init("apns-channel-id")!] = channel.id
                return (Response(status: .created, headers: fields), nil)
            case .read:
                if let refusal = Self.check(channelID) { return refused(refusal) }
                switch try await service.broadcasts.lookup(
                    channelID ?? "", bundleID: bundleID, environment: environment)
                {
                case .unknown: return refused(.badRequest("BadChannelId"))
                case .deleted: return refused(.badRequest("ChannelNotRegistered"))
                case .found(let channel):
                    var response = PushResponder.json(channel.json)
                    response.headers[.init("apns-request-id")!] = requestID
                    return (response, nil)
                }
            case .delete:
                if let refusal = Self.check(channelID) { return refused(refusal) }
                guard try await service.broadcasts.delete(channelID ?? "", bundleID: bundleID, environment: environment)
                else { return refused(.badPath) }
                return (Response(status: .noContent, headers: fields), nil)
            case .list:
                let ids = try await service.broadcasts.channels(bundleID: bundleID, environment: environment)
                var response = PushResponder.json(["channels": .array(ids.map(JSON.string))])
                response.headers[.init("apns-request-id")!] = requestID
                return (response, nil)
            }
        } catch {
            service.logger.error(
                "channel request failed: the channel store did not answer",
                metadata: ["apns.request_id": .string(requestID), "store.error": .string(error.description)])
            return refused(.internalServerError)
        }
    }

    /// A read's or delete's `apns-channel-id`: present, and of the shape APNs gives.
    static func check(_ channelID: String?) -> APNsError? {
        guard let channelID else { return .badRequest("MissingChannelId") }
        return BroadcastChannel.isWellFormed(channelID) ? nil : .badRequest("BadChannelId")
    }

    /// A create's body: `push-type` `LiveActivity` (400 `MissingPushType`, `InvalidPushType`) and
    /// `message-storage-policy` 0 or 1 (400 `BadMessageStoragePolicy`, nse's word: Apple's table has none for it).
    static func creation(_ body: [UInt8]?) -> Result<BroadcastChannel.StoragePolicy, APNsError> {
        let document = body.flatMap { try? JSON.parse($0) }
        guard let type = document?["push-type"] else { return .failure(.badRequest("MissingPushType")) }
        // Apple writes `LiveActivity`; node-apn sends `liveactivity`: either case is taken.
        guard type.stringValue?.lowercased() == "liveactivity" else {
            return .failure(.badRequest("InvalidPushType"))
        }
        // A number, or its digits in a string (node-apn's README sends "1").
        let given = document?["message-storage-policy"]
        guard let number = given?.intValue ?? given?.stringValue.flatMap({ Int64($0) }),
            let policy = BroadcastChannel.StoragePolicy(rawValue: number)
        else { return .failure(.badRequest("BadMessageStoragePolicy")) }
        return .success(policy)
    }
}
