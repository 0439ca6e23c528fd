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
/// - `PUT /v1/control/devices/{token}/lock` `{"state": "locked"}` (`unlocked`, `before-first-unlock`): the keychain
///   items its extension can read from the next push, as `nse device set --lock-state` does.
/// - `GET /v1/control/recording`: whether pushes are being written as replay cases (`--record DIR`), where, and how
///   many; `PUT` `{"enabled": false}` stops it, `{"enabled": true}` starts it again (404 without `--record`).
/// - `GET /v1/requests[?token=HEX][&topic=T][&unique_id=UUID][&since=ID][&limit=N]`: the request log, newest first;
///   `DELETE /v1/requests` clears it.
///
/// With a fleet (`--database`) the faults, the unavailable switch and the request log are the fleet's, whichever
/// node is asked; connection rules stay each node's own (`--fault` on that node).
struct ControlController {
    let service: PushService

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .get("control/faults") { _, _ in
                guard let fleet = service.fleet else { return PushResponder.json(service.faults.json) }
                return await Self.fleetAnswer { () throws(FleetError) in PushResponder.json(try await fleet.faults()) }
            }
            .post("control/faults", use: addFaults)
            .delete("control/faults") { _, _ in
                guard let fleet = service.fleet else {
                    service.faults.clear()
                    return Response(status: .noContent)
                }
                return await Self.fleetAnswer { () throws(FleetError) in
                    try await fleet.clearFaults()
                    return Response(status: .noContent)
                }
            }
            .delete("control/faults/:id") { _, context in
                let noSuchFault = Self.error(404, "NoSuchFault", "no fault rule with that id")
                guard let id = context.parameters.get("id").flatMap(Int.init) else { return noSuchFault }
                guard let fleet = service.fleet else {
                    return service.faults.remove(id: id) ? Response(status: .noContent) : noSuchFault
                }
                return await Self.fleetAnswer { () throws(FleetError) in
                    try await fleet.removeFault(id: id) ? Response(status: .noContent) : noSuchFault
                }
            }
            .put("control/unavailable", use: unavailable)
            .delete("control/unavailable") { _, _ in await setUnavailable(nil) }
            .put("control/devices/:token/online", use: online)
            .put("control/devices/:token/lock", use: lock)
            .get("control/recording") { _, _ in
                guard let recording = service.recording else { return Self.notRecording }
                return PushResponder.json(recording.json)
            }
            .put("control/recording", use: recording)
            .get("requests", use: requests)
            .delete("requests") { _, _ in
                guard let fleet = service.fleet else {
                    service.requests.clear()
                    return Response(status: .noContent)
                }
                return await Self.fleetAnswer { () throws(FleetError) in
                    try await fleet.clearRequests()
                    return Response(status: .noContent)
                }
            }
    }

    /// A fleet request's answer, or 500 naming what the fleet's database said.
    private static func fleetAnswer(_ body: () async throws(FleetError) -> Response) async -> Response {
        do { return try await body() } catch { return Self.error(500, "InternalServerError", error.description) }
    }

    /// A control request's error: the status, and `{"reason": …, "detail": …}` (the detail names the field).
    static func error(_ status: Int, _ reason: String, _ detail: String) -> Response {
        PushResponder.json(["reason": .string(reason), "detail": .string(detail)], status: status)
    }

    private static func body(_ request: Request) async -> JSON?? {
        guard let buffer = try? await request.body.collect(upTo: 64 * 1024) else { return .some(nil) }
        if buffer.readableBytes == 0 { return .none }
        return .some(try? JSON.parse(Array(buffer.readableBytesView), options: JSONParseOptions(requireObject: false)))
    }

    @Sendable func addFaults(_ request: Request, context: PushRequestContext) async -> Response {
        guard case .some(let parsed) = await Self.body(request), let document = parsed else {
            return Self.error(400, "BadFault", "the body must be a JSON fault object or an array of them")
        }
        let now = SystemClock.unixMilliseconds()
        var rules: [FaultRule] = []
        for item in document.arrayValue ?? [document] {
            do { rules.append(try FaultRule(json: item, now: now)) } catch {
                return Self.error(400, "BadFault", error.description)
            }
        }
        guard let fleet = service.fleet else {
            let added = rules.map { service.faults.add($0).json }
            return PushResponder.json(document.arrayValue == nil ? added[0] : .array(added), status: 201)
        }
        if rules.contains(where: { $0.connection != nil }) {
            return Self.error(
                400, "BadFault",
                "connection faults (connect_delay, settings_delay, max_connections) are each node's: give them with --fault on that node"
            )
        }
        return await Self.fleetAnswer { () throws(FleetError) in
            let added = try await fleet.addFaults(rules)
            return PushResponder.json(document.arrayValue == nil ? added[0] : .array(added), status: 201)
        }
    }

    @Sendable func unavailable(_ request: Request, context: PushRequestContext) async -> Response {
        var reason = "Shutdown"
        switch await Self.body(request) {
        case .none: break
        case .some(let parsed):
            guard let document = parsed?.objectValue,
                document.keys.allSatisfy({ $0 == "reason" })
            else { return Self.error(400, "BadControl", #"the body must be {"reason": "…"} or empty"#) }
            if let given = document["reason"] {
                guard let text = given.stringValue, FaultRule.isReasonWord(text) else {
                    return Self.error(400, "BadControl", "reason must be an APNs reason word, e.g. Shutdown")
                }
                reason = text
            }
        }
        return await setUnavailable(reason)
    }

    /// Plays unavailable with `reason` (nil: back), on this node or the whole fleet.
    private func setUnavailable(_ reason: String?) async -> Response {
        guard let fleet = service.fleet else {
            service.faults.setUnavailable(reason)
            return Response(status: .noContent)
        }
        return await Self.fleetAnswer { () throws(FleetError) in
            try await fleet.setUnavailable(reason)
            return Response(status: .noContent)
        }
    }

    static var notRecording: Response {
        error(404, "NotRecording", "nse serve runs without --record DIR: there is nothing to switch")
    }

    @Sendable func recording(_ request: Request, context: PushRequestContext) async -> Response {
        guard let recording = service.recording else { return Self.notRecording }
        guard case .some(let parsed) = await Self.body(request), let document = parsed?.objectValue,
            document.keys == ["enabled"], let enabled = document["enabled"]?.boolValue
        else { return Self.error(400, "BadControl", #"the body must be {"enabled": true} or {"enabled": false}"#) }
        recording.setEnabled(enabled)
        return PushResponder.json(recording.json)
    }

    /// A device route's request as this node takes it: answered by the node serving the device (relayed), an unknown
    /// token, or this node's device with the body (an object, or nil when it is not one).
    private enum DeviceControl {
        case answered(Response)
        case local(Device, body: JSONObject?)
    }

    private func deviceControl(_ request: Request, _ context: PushRequestContext) async -> DeviceControl {
        let token = context.parameters.get("token") ?? ""
        let body = try? await request.body.collect(upTo: 64 * 1024)
        if let relayed = await service.relay(
            token: token, method: "PUT", path: request.uri.description, headers: request.apnsHeaders,
            body: body.map { Array($0.readableBytesView) } ?? [])
        {
            return .answered(relayed)
        }
        guard let device = service.device(for: token) else {
            return .answered(PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil))
        }
        return .local(device, body: body.flatMap { (try? JSON.parse(Array($0.readableBytesView)))?.objectValue })
    }

    /// 500, and a log line, when a device route could not write `device.json`.
    private func notSaved(_ device: Device, _ error: DeviceError) -> Response {
        service.logger.error(
            "device not saved",
            metadata: ["device.folder": .string(device.directory), "device.error": .string(error.description)])
        return Self.error(500, "InternalServerError", "the device's device.json could not be written")
    }

    @Sendable func online(_ request: Request, context: PushRequestContext) async -> Response {
        let (device, body): (Device, JSONObject?)
        switch await deviceControl(request, context) {
        case .answered(let response): return response
        case .local(let local, let document): (device, body) = (local, document)
        }
        guard let body, body.keys == ["online"], let online = body["online"]?.boolValue else {
            return Self.error(400, "BadControl", #"the body must be {"online": true} or {"online": false}"#)
        }
        do { try service.setOnline(online, device: device) } catch { return notSaved(device, error) }
        return PushResponder.json(["online": .bool(online), "held": .int(service.heldCount(for: device))])
    }

    @Sendable func lock(_ request: Request, context: PushRequestContext) async -> Response {
        let (known, body): (Device, JSONObject?)
        switch await deviceControl(request, context) {
        case .answered(let response): return response
        case .local(let local, let document): (known, body) = (local, document)
        }
        guard let body, body.keys == ["state"], let state = body["state"]?.stringValue.flatMap(DeviceLockState.init)
        else {
            return Self.error(
                400, "BadControl",
                #"the body must be {"state": "unlocked"}, {"state": "locked"} or {"state": "before-first-unlock"}"#)
        }
        do throws(DeviceError) {
            // Read again: what else the file says may have changed since this node read it.
            var device = try Device.open(at: known.directory)
            if device.config.lockState != state {
                device.config.lockState = state
                try device.save()
            }
        } catch {
            return notSaved(known, error)
        }
        return PushResponder.json(["state": state.json])
    }

    @Sendable func requests(_ request: Request, context: PushRequestContext) async -> Response {
        let query = request.uri.queryParameters
        var limit = 1000
        if let text = query["limit"] {
            guard let parsed = Int(text), parsed >= 0 else {
                return PushResponder.error(.badRequest("BadLimit"), apnsID: nil)
            }
            limit = parsed
        }
        var since = 0
        if let text = query["since"] {
            guard let parsed = Int(text), parsed >= 0 else {
                return PushResponder.error(.badRequest("BadSince"), apnsID: nil)
            }
            since = parsed
        }
        let uniqueID = query["unique_id"].map(String.init)
        if let uniqueID, !APNsValidation.isUUID(uniqueID) {
            return PushResponder.error(.badRequest("BadUniqueId"), apnsID: nil)
        }
        let token = query["token"].map(String.init)
        let topic = query["topic"].map(String.init)
        guard let fleet = service.fleet else {
            let entries = service.requests.entries(
                token: token, topic: topic, uniqueID: uniqueID, since: since, limit: limit)
            return PushResponder.json(.array(entries.map(\.json)))
        }
        return await Self.fleetAnswer { () throws(FleetError) in
            PushResponder.json(
                .array(
                    try await fleet.requests(
                        token: token, topic: topic, uniqueID: uniqueID, since: since, limit: limit)))
        }
    }
}
