public import Hummingbird
import NIOCore
import NSEJSON
import NSEPayload

/// The HTTP side of `nse serve`, a controller per API: ``PushController`` (APNs's `POST /3/device/{token}`),
/// ``ChannelController`` and ``BroadcastController`` (iOS 18's `/1/apps/{bundle}/channels` and
/// `/4/broadcasts/apps/{bundle}`), ``ResultsController`` (`/v1/devices`, `/v1/events`, `/v1/notify`),
/// ``ControlController`` (`/v1/control`, `/v1/requests`), ``PageController`` (the lock-screen page at `/`) and
/// ``MetricsController`` (`/metrics`), on an ``APNsRouter`` (APNs's 404 and 405).
public struct PushResponder: HTTPResponder {
    public typealias Context = PushRequestContext
    public let service: PushService
    /// The largest body read: the VoIP limit; anything longer is `PayloadTooLarge` whatever the push type.
    static var maxBody: Int { PushType.voip.payloadLimit }

    private let router: RouterResponder<Context>

    public init(service: PushService) {
        self.service = service
        let router = APNsRouter()
        router.addRoutes(PushController(service: service).endpoints, atPath: "/3/device")
        router.addRoutes(ChannelController(service: service).endpoints, atPath: "/1/apps")
        router.addRoutes(BroadcastController(service: service).endpoints, atPath: "/4/broadcasts/apps")
        router.addRoutes(PageController(service: service).endpoints)
        router.addRoutes(ResultsController(service: service).endpoints, atPath: "/v1")
        router.addRoutes(ControlController(service: service).endpoints, atPath: "/v1")
        router.addRoutes(FleetController(service: service).endpoints, atPath: "/v1")
        router.addRoutes(MetricsController(metrics: service.metrics).endpoints)
        self.router = router.buildResponder()
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        var response = try await router.respond(to: request, context: context)
        // HEAD is answered with the head alone (RFC 9110 §9.3.2). HTTP/1.1's encoder drops the body itself; over
        // HTTP/2 a body would be DATA on a stream that must carry none, which NIOHTTP2 refuses.
        if request.method == .head { response.body = ResponseBody() }
        return response
    }

    /// APNs's error answer: the status and `{"reason": …}`.
    static func error(_ error: APNsError, apnsID: String?) -> Response {
        var body: JSONObject = ["reason": .string(error.reason)]
        if let timestamp = error.timestamp { body["timestamp"] = .int(timestamp) }
        var response = json(.object(body), status: error.status)
        if let apnsID { response.headers[.init("apns-id")!] = apnsID }
        return response
    }

    /// Another node's answer (a forwarded request's), sent back as it is: its status, body and the headers APNs's
    /// answers carry.
    static func relayed(status: Int, headers: [(name: String, value: String)], body: [UInt8]) -> Response {
        var fields = HTTPFields()
        for (name, value) in headers where ["apns-id", "apns-unique-id", "content-type"].contains(name) {
            fields[.init(name)!] = value
        }
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func json(_ value: JSON, status: Int = 200) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        return Response(
            status: HTTPResponse.Status(code: status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serializedBytes())))
    }
}
