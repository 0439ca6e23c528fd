import Hummingbird
import Logging
import NIOCore
import NSEDevice
import NSEJSON
import NSESystem

/// nse's control API, for a push server's CI to script faults and read back what it sent (docs/serve.md):
///
/// - `GET /v1/control/faults`: the unavailable switch and the rules left; `POST` adds a rule (or an array of them),
///   `DELETE` removes them all, `DELETE /v1/control/faults/{id}` one.
/// - `PUT /v1/control/unavailable` (`{"reason": "Shutdown"}`, optional): every push answered 503 until
///   `DELETE /v1/control/unavailable`.
/// - `PUT /v1/control/devices/{token}/online` `{"online": false}`: the device is offline (pushes held as APNs
///   keeps them) or back (what was kept is delivered), as `nse device set --online` does.
/// - `GET /v1/requests[?token=HEX][&topic=T][&since=ID][&limit=N]`: the request log, newest first;
///   `DELETE /v1/requests` clears it.
extension PushResponder {
    typealias Route = (path: RouterPath, method: HTTPRequest.Method, handler: Handler)
    typealias Handler = @Sendable (Request, Context) async throws -> Response

    static func controlRoutes(_ service: PushService) -> [Route] {
        [
            ("/v1/control/faults", .get, { _, _ in Self.json(service.faults.json) }),
            ("/v1/control/faults", .post, { request, _ in await Self.addFaults(request, service: service) }),
            (
                "/v1/control/faults", .delete,
                { _, _ in
                    service.faults.clear()
                    return Response(status: .noContent)
                }
            ),
            (
                "/v1/control/faults/:id", .delete,
                { _, context in
                    guard let id = context.parameters.get("id").flatMap(Int.init), service.faults.remove(id: id) else {
                        return Self.controlError(404, "NoSuchFault", "no fault rule with that id")
                    }
                    return Response(status: .noContent)
                }
            ),
            ("/v1/control/unavailable", .put, { request, _ in await Self.unavailable(request, service: service) }),
            (
                "/v1/control/unavailable", .delete,
                { _, _ in
                    service.faults.setUnavailable(nil)
                    return Response(status: .noContent)
                }
            ),
            (
                "/v1/control/devices/:token/online", .put,
                { request, context in
                    await Self.online(request, token: context.parameters.get("token") ?? "", service: service)
                }
            ),
            ("/v1/requests", .get, { request, _ in Self.requests(request, service: service) }),
            (
                "/v1/requests", .delete,
                { _, _ in
                    service.requests.clear()
                    return Response(status: .noContent)
                }
            ),
        ]
    }

    /// A control request's error: the status, and `{"reason": …, "detail": …}` (the detail names the field).
    static func controlError(_ status: Int, _ reason: String, _ detail: String) -> Response {
        json(["reason": .string(reason), "detail": .string(detail)], status: status)
    }

    private static func body(_ request: Request) async -> JSON?? {
        guard let buffer = try? await request.body.collect(upTo: 64 * 1024) else { return .some(nil) }
        if buffer.readableBytes == 0 { return .none }
        return .some(try? JSON.parse(Array(buffer.readableBytesView), options: JSONParseOptions(requireObject: false)))
    }

    private static func addFaults(_ request: Request, service: PushService) async -> Response {
        guard case .some(let parsed) = await body(request), let document = parsed else {
            return controlError(400, "BadFault", "the body must be a JSON fault object or an array of them")
        }
        let now = SystemClock.unixMilliseconds()
        var rules: [FaultRule] = []
        for item in document.arrayValue ?? [document] {
            do { rules.append(try FaultRule(json: item, now: now)) } catch {
                return controlError(400, "BadFault", error.description)
            }
        }
        let added = rules.map { service.faults.add($0).json }
        return json(document.arrayValue == nil ? added[0] : .array(added), status: 201)
    }

    private static func unavailable(_ request: Request, service: PushService) async -> Response {
        var reason = "Shutdown"
        switch await body(request) {
        case .none: break
        case .some(let parsed):
            guard let document = parsed?.objectValue,
                document.keys.allSatisfy({ $0 == "reason" })
            else { return controlError(400, "BadControl", #"the body must be {"reason": "…"} or empty"#) }
            if let given = document["reason"] {
                guard let text = given.stringValue, FaultRule.isReasonWord(text) else {
                    return controlError(400, "BadControl", "reason must be an APNs reason word, e.g. Shutdown")
                }
                reason = text
            }
        }
        service.faults.setUnavailable(reason)
        return Response(status: .noContent)
    }

    private static func online(_ request: Request, token: String, service: PushService) async -> Response {
        guard let device = service.device(for: token) else { return error(.badRequest("BadDeviceToken"), apnsID: nil) }
        guard case .some(let parsed) = await body(request), let document = parsed?.objectValue,
            document.keys == ["online"], let online = document["online"]?.boolValue
        else { return controlError(400, "BadControl", #"the body must be {"online": true} or {"online": false}"#) }
        do {
            try service.setOnline(online, device: device)
        } catch {
            service.logger.error(
                "device not saved",
                metadata: ["device": .string(device.directory), "error": .string(error.description)])
            return controlError(500, "InternalServerError", "the device's device.json could not be written")
        }
        return json(["online": .bool(online), "held": .int(service.heldCount(for: device))])
    }

    private static func requests(_ request: Request, service: PushService) -> Response {
        let query = request.uri.queryParameters
        var limit = 1000
        if let text = query["limit"] {
            guard let parsed = Int(text), parsed >= 0 else { return error(.badRequest("BadLimit"), apnsID: nil) }
            limit = parsed
        }
        var since = 0
        if let text = query["since"] {
            guard let parsed = Int(text), parsed >= 0 else { return error(.badRequest("BadSince"), apnsID: nil) }
            since = parsed
        }
        let entries = service.requests.entries(
            token: query["token"].map(String.init), topic: query["topic"].map(String.init), since: since, limit: limit)
        return json(.array(entries.map(\.json)))
    }
}
