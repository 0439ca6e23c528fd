import Hummingbird
import Logging
import NIOCore
import NSEJSON

/// APNs's broadcast API (iOS 18), `POST /4/broadcasts/apps/{bundle}`: the server playing unavailable first, then the
/// provider (``ProviderIdentity``), APNs's rules (``BroadcastValidation``), the channel; 200 with `apns-request-id`
/// once the broadcast is on disk (``ChannelStore``), then it is handed to every subscribed activity
/// (``BroadcastFanOut``). Served on the same listeners as `/3/device` (APNs serves it on its push host).
struct BroadcastController {
    let service: PushService

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .post(":bundle", use: broadcast)
    }

    @Sendable func broadcast(_ request: Request, context: PushRequestContext) async -> Response {
        let bundleID = context.parameters.get("bundle") ?? ""
        let headers = request.apnsHeaders
        let body = try? await request.body.collect(upTo: PushResponder.maxBody)
        let requestID = BroadcastValidation.requestID(headers, newID: PushService.newAPNsID)
        let (response, reason) = await answer(
            body.map { Array($0.readableBytesView) }, bundleID: bundleID, headers: headers, requestID: requestID,
            context: context)
        service.metrics.broadcastAnswered(headers, status: response.status.code, reason: reason)
        return response
    }

    private func answer(
        _ body: [UInt8]?, bundleID: String, headers: APNsHeaders, requestID: String, context: PushRequestContext
    ) async -> (Response, String?) {
        func refused(_ error: APNsError) -> (Response, String?) {
            (Self.error(error, requestID: requestID), error.reason)
        }
        if let unavailable = await service.channelsUnavailable() { return refused(unavailable) }
        let provider: ProviderIdentity
        switch await ProviderIdentity.authenticate(headers: headers, service: service, context: context) {
        case .failure(let error): return refused(error)
        case .success(let found): provider = found
        }
        if let refusal = provider.check(bundleID, devices: service.devices) { return refused(refusal) }
        let valid: BroadcastValidation.Request
        switch BroadcastValidation.validate(headers: headers, body: body, newID: PushService.newAPNsID) {
        case .failure(let error): return refused(error)
        case .success(let request): valid = request
        }
        guard let fanOut = service.broadcasts.fanOut else { return refused(.internalServerError) }
        guard fanOut.isAccepting else { return refused(.shutdown) }
        let environment = service.environment.rawValue
        let uniqueID = PushService.newAPNsID()
        do throws(Broadcasts.Failure) {
            switch try await service.broadcasts.lookup(valid.channelID, bundleID: bundleID, environment: environment) {
            case .unknown: return refused(.badRequest("BadChannelId"))
            case .deleted: return refused(.badRequest("ChannelNotRegistered"))
            case .found(let channel):
                _ = try await service.broadcasts.accept(
                    on: channel, requestID: valid.requestID, uniqueID: uniqueID, priority: valid.priority,
                    expiration: valid.expiration, collapseID: valid.collapseID, payload: body ?? [])
            }
        } catch {
            service.logger.error(
                "broadcast refused: not recorded",
                metadata: ["apns.request_id": .string(valid.requestID), "store.error": .string(error.description)])
            return refused(.internalServerError)
        }
        var fields = HTTPFields()
        fields[.init("apns-request-id")!] = valid.requestID
        if service.sendsUniqueID { fields[.init("apns-unique-id")!] = uniqueID }
        return (Response(status: .ok, headers: fields), nil)
    }

    /// APNs's error answer on the broadcast and channel APIs: the status, `{"reason": …}` and `apns-request-id`.
    static func error(_ error: APNsError, requestID: String) -> Response {
        var response = PushResponder.json(["reason": .string(error.reason)], status: error.status)
        response.headers[.init("apns-request-id")!] = requestID
        return response
    }
}
