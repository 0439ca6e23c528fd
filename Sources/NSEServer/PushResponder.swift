public import Hummingbird
import NIOCore
import NSEDevice
import NSEJSON
import NSEPayload

/// The HTTP side of `nse serve`: APNs's `POST /3/device/{token}` and nse's `/v1` endpoints.
///
/// - `POST /3/device/{token}`: APNs's rules (``APNsValidation``); 200 with `apns-id` once queued, the extension
///   runs afterwards on a worker thread.
/// - `GET /v1/devices/{token}/notifications[?limit=N]`: recorded results, newest first.
/// - `POST /v1/notify` `{"device": TOKEN, "payload": {…}, "push_type": "alert"}`: waits, answers the result.
public struct PushResponder<Context: RequestContext>: HTTPResponder {
    public let service: PushService
    /// The largest body read: the VoIP limit; anything longer is `PayloadTooLarge` whatever the push type.
    static var maxBody: Int { PushType.voip.payloadLimit }

    public init(service: PushService) {
        self.service = service
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        let parts = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count >= 3, parts[0] == "", parts[1] == "3", parts[2] == "device", parts.count <= 4 {
            guard request.method == .post else { return Self.error(.methodNotAllowed, apnsID: nil) }
            return await push(request, token: parts.count == 4 ? parts[3] : "")
        }
        if parts.count == 5, parts[1] == "v1", parts[2] == "devices", parts[4] == "notifications" {
            guard request.method == .get else { return Self.error(.methodNotAllowed, apnsID: nil) }
            return results(request, token: parts[3])
        }
        if parts == ["", "v1", "notify"] {
            guard request.method == .post else { return Self.error(.methodNotAllowed, apnsID: nil) }
            return await notify(request)
        }
        return Self.error(.badPath, apnsID: nil)
    }

    private func push(_ request: Request, token: String) async -> Response {
        let headers: APNsHeaders = request.headers.map { (name: $0.name.canonicalName.lowercased(), value: $0.value) }
        let body = try? await request.body.collect(upTo: Self.maxBody)
        let verdict = APNsValidation.validate(
            token: token, headers: headers, body: body.map { Array($0.readableBytesView) },
            device: service.device(for:), newID: PushService.newAPNsID)
        switch verdict {
        case .failure(let error):
            let given = headers.first(where: { $0.name == "apns-id" })?.value
            return Self.error(error, apnsID: given.flatMap { APNsValidation.isUUID($0) ? $0 : nil })
        case .success(let (push, device)):
            guard service.enqueue(push, to: device) else { return Self.error(.tooManyRequests, apnsID: push.apnsID) }
            var fields = HTTPFields()
            fields[.init("apns-id")!] = push.apnsID
            return Response(status: .ok, headers: fields)
        }
    }

    private func results(_ request: Request, token: String) -> Response {
        guard let device = service.device(for: token) else { return Self.error(.badRequest("BadDeviceToken"), apnsID: nil) }
        var limit = 100
        if let text = request.uri.queryParameters["limit"] {
            guard let parsed = Int(text), parsed >= 0 else { return Self.error(.badRequest("BadLimit"), apnsID: nil) }
            limit = parsed
        }
        return Self.json(.array(service.store.results(for: device, limit: limit)))
    }

    private func notify(_ request: Request) async -> Response {
        guard let body = try? await request.body.collect(upTo: 64 * 1024),
            let document = try? JSON.parse(Array(body.readableBytesView))
        else { return Self.error(.badRequest("MalformedRequest"), apnsID: nil) }
        guard let token = document["device"]?.stringValue, let device = service.device(for: token) else {
            return Self.error(.badRequest("BadDeviceToken"), apnsID: nil)
        }
        guard let payload = document["payload"], payload.objectValue != nil else {
            return Self.error(.badRequest("PayloadEmpty"), apnsID: nil)
        }
        let typeName = document["push_type"]?.stringValue ?? "alert"
        guard let pushType = PushType(rawValue: typeName) else { return Self.error(.badRequest("InvalidPushType"), apnsID: nil) }
        let push = AcceptedPush(
            apnsID: PushService.newAPNsID(), token: token,
            tokenKind: device.config.voipToken.lowercased() == token.lowercased() ? .voip : .remote,
            pushType: pushType, priority: pushType == .background ? 5 : 10, payload: payload.serializedBytes())
        guard let result = await service.deliverAndWait(push, to: device) else {
            return Self.error(.tooManyRequests, apnsID: push.apnsID)
        }
        var response = Self.json(result)
        response.headers[.init("apns-id")!] = push.apnsID
        return response
    }

    /// APNs's error answer: the status and `{"reason": …}`.
    static func error(_ error: APNsError, apnsID: String?) -> Response {
        var response = json(["reason": .string(error.reason)], status: error.status)
        if let apnsID { response.headers[.init("apns-id")!] = apnsID }
        return response
    }

    static func json(_ value: JSON, status: Int = 200) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serializedBytes())))
    }
}
