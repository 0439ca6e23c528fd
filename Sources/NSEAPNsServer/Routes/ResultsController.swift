import Hummingbird
import Logging
import NIOCore
import NSEDevice
import NSEJSON
import NSEPayload
import ServiceLifecycle

/// nse's results API, for a push server's tests and the page:
///
/// - `GET /v1/devices[?token=T]`: the served devices (the one holding `T`), their tokens and how many pushes are
///   held for them; with a fleet, every node's.
/// - `GET /v1/devices/{token}/notifications[?limit=N][&since=ID]`: recorded results, newest first; with a fleet, a
///   device another node serves is answered from the fleet's copies.
/// - `GET /v1/events[?device=TOKEN…]`: every recorded result as a server-sent event, live; with a fleet, every
///   node's.
/// - `POST /v1/notify` `{"device": TOKEN, "payload": {…}, "push_type": "alert"}`: waits, answers the result.
struct ResultsController {
    let service: PushService
    /// Seconds between the comment lines that keep an idle event stream open through proxies.
    static let keepAliveSeconds: UInt64 = 15

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .get("events", use: events)
            .get("devices", use: devices)
            .get("devices/:token/notifications", use: results)
            .get("devices/:token/notification-center", use: notificationCenter)
            .post("notify", use: notify)
    }

    /// A text/event-stream of `notification` events, one per recorded result, until the client goes or the server
    /// stops.
    @Sendable func events(_ request: Request, context: PushRequestContext) async -> Response {
        let tokens = request.uri.queryParameters.getAll("device").map { String($0) }
        var followed: Set<String>?
        if !tokens.isEmpty {
            var set = Set<String>()
            for token in tokens {
                guard let device = service.device(for: token) else {
                    // Another node's device: its events carry both its tokens, so either follows it; a Live
                    // Activity's token (no event carries it) follows its device, found on its node.
                    if service.fleet != nil, APNsValidation.isTokenShaped(token) {
                        set.insert(await service.fleetDeviceToken(for: token))
                        continue
                    }
                    return PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil)
                }
                set.insert(device.config.remoteToken.lowercased())
                set.insert(device.config.voipToken.lowercased())
            }
            followed = set
        }
        let hub = service.events
        let (id, stream) = hub.subscribe(tokens: followed)
        var fields = HTTPFields()
        fields[.contentType] = "text/event-stream"
        fields[.cacheControl] = "no-cache"
        let body = ResponseBody { writer in
            defer { hub.unsubscribe(id) }
            try await withGracefulShutdownHandler {
                try await writer.write(ByteBuffer(string: ": nse serve events\n\n"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Comments keep an idle stream open; the group ends when the events do.
                    group.addTask {
                        while !Task.isCancelled {
                            try await Task.sleep(nanoseconds: Self.keepAliveSeconds * 1_000_000_000)
                            hub.keepAlive(id)
                        }
                    }
                    for await event in stream { try await writer.write(ByteBuffer(string: event.text)) }
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                hub.unsubscribe(id)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: fields, body: body)
    }

    /// The node's devices (`?token=`: the one holding that token, an app's or a Live Activity's); with a fleet,
    /// every node's, each with its `node`, in the order of the nodes' names (any node gives the same list). Another
    /// node asking (the fleet's secret) gets this node's own.
    @Sendable func devices(_ request: Request, context: PushRequestContext) async -> Response {
        let fleet = service.fleet
        var token: String?
        if let text = request.uri.queryParameters["token"] {
            guard APNsValidation.isTokenShaped(text) else {
                return PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil)
            }
            token = String(text).lowercased()
        }
        // Read after the other nodes answered: a takeover while they were asked adds the devices it took.
        let own = { [service] in
            let served = token.map { service.devices.device(for: $0).map { [$0] } ?? [] } ?? service.devices.all
            return served.map { device -> JSON in
                var summary = Self.summary(device).objectValue ?? JSONObject()
                summary["held"] = .int(service.heldCount(for: device))
                if let fleet { summary["node"] = .string(fleet.node) }
                return .object(summary)
            }
        }
        let headers = request.apnsHeaders
        guard let fleet, fleet.forwardedIdentity(headers) == nil else { return PushResponder.json(.array(own())) }
        switch await service.otherNodesDevices(token: token) {
        case .success(var lists):
            lists.append((fleet.node, own()))
            return PushResponder.json(.array(lists.sorted { $0.node < $1.node }.flatMap(\.devices)))
        case .failure(let error):
            return PushResponder.error(error, apnsID: nil)
        }
    }

    /// A device as `GET /v1/devices` lists it, but for `held`.
    private static func summary(_ device: Device) -> JSON {
        [
            "directory": .string(device.directory), "bundle_id": .string(device.config.bundleID),
            "team_id": .string(device.config.teamID), "remote_token": .string(device.config.remoteToken),
            "voip_token": .string(device.config.voipToken),
            "uninstalled_at": device.config.uninstalledAt.map(JSON.int) ?? .null,
            "callback_url": device.config.callbackURL.map(JSON.string) ?? .null,
            "online": .bool(device.config.online),
        ]
    }

    /// The device's Notification Center now: what it shows, what it waits to show, the badge (docs/serve.md). A
    /// device of another node is answered by that node (its containers are there).
    @Sendable func notificationCenter(_ request: Request, context: PushRequestContext) async -> Response {
        let token = context.parameters.get("token") ?? ""
        if let relayed = await service.relay(
            token: token, method: "GET", path: request.uri.description, headers: request.apnsHeaders, body: [])
        {
            return relayed
        }
        guard let device = service.device(for: token) else {
            return PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil)
        }
        do { return PushResponder.json(try device.notificationCenter.state().json) } catch {
            service.logger.error(
                "notification center not readable",
                metadata: ["device.folder": .string(device.directory), "device.error": .string(error.description)])
            return PushResponder.error(.internalServerError, apnsID: nil)
        }
    }

    @Sendable func results(_ request: Request, context: PushRequestContext) async -> Response {
        let token = context.parameters.get("token") ?? ""
        var limit = 100
        if let text = request.uri.queryParameters["limit"] {
            guard let parsed = Int(text), parsed >= 0, parsed <= 100_000 else {
                return PushResponder.error(.badRequest("BadLimit"), apnsID: nil)
            }
            limit = parsed
        }
        var since: Int64 = 0
        if let text = request.uri.queryParameters["since"] {
            guard let parsed = Int64(text), parsed >= 0 else {
                return PushResponder.error(.badRequest("BadSince"), apnsID: nil)
            }
            since = parsed
        }
        // A device this node serves is read from its own store; with a fleet, another node's from the fleet's copies.
        let read: @Sendable (_ limit: Int, _ before: Int64) async throws -> [JSON]?
        let what: Logger.Metadata
        if let device = service.device(for: token) {
            read = { [service, since] limit, before in
                try await service.results(for: device, limit: limit, since: since, before: before)
            }
            what = ["device.folder": .string(device.directory)]
        } else if let fleet = service.fleet, APNsValidation.isTokenShaped(token) {
            // A Live Activity's token has no row: its device's copies, the device named by its node (asked once).
            let device = await service.fleetDeviceToken(for: token)
            read = { [since] limit, before in
                try await fleet.results(token: device, limit: limit, since: since, before: before)
            }
            what = ["device.token": .string(token.lowercased())]
        } else {
            return PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil)
        }
        // The first page is read before the answer starts, so a store that cannot be read gets a 500. A longer
        // answer is then streamed page by page: its memory is one page's whatever `limit` is.
        let pageRows = ResultStore.pageRows
        let first: [JSON]
        do {
            guard let page = try await read(min(limit, pageRows), .max) else {
                return PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil)
            }
            first = page
        } catch {
            service.logger.error(
                "results not readable", metadata: what.merging(["store.error": .string("\(error)")]) { $1 })
            return PushResponder.error(.internalServerError, apnsID: nil)
        }
        guard limit > pageRows, first.count == pageRows, let firstBefore = first.last?["id"]?.intValue else {
            return PushResponder.json(.array(first))
        }
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        let body = ResponseBody { [limit] writer in
            try await writer.write(Self.elements(first, opening: "["))
            var remaining = limit - first.count
            var before = firstBefore
            while remaining > 0 {
                let page: [JSON]
                do {
                    page = try await read(min(remaining, pageRows), before) ?? []
                } catch {
                    // The head has gone: the answer can only be cut off, which the client sees as an error.
                    service.logger.error(
                        "results not readable: answer cut off",
                        metadata: what.merging(["store.error": .string("\(error)")]) { $1 })
                    throw error
                }
                guard let last = page.last?["id"]?.intValue else { break }
                try await writer.write(Self.elements(page, opening: ","))
                remaining -= page.count
                before = last
            }
            try await writer.write(ByteBuffer(string: "]"))
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: fields, body: body)
    }

    /// Array elements after `opening` ("[" for the first page, "," for the next), written as `JSON`'s compact
    /// serialization writes an array: the streamed answer is byte for byte the one-piece answer.
    private static func elements(_ page: [JSON], opening: String) -> ByteBuffer {
        var bytes = Array(opening.utf8)
        for (index, element) in page.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += element.serializedBytes()
        }
        return ByteBuffer(bytes: bytes)
    }

    @Sendable func notify(_ request: Request, context: PushRequestContext) async -> Response {
        guard let body = try? await request.body.collect(upTo: 64 * 1024),
            let document = try? JSON.parse(Array(body.readableBytesView))
        else { return PushResponder.error(.badRequest("MalformedRequest"), apnsID: nil) }
        if let token = document["device"]?.stringValue,
            let relayed = await service.relay(
                token: token, method: "POST", path: request.uri.description,
                headers: request.apnsHeaders,
                body: Array(body.readableBytesView))
        {
            return relayed
        }
        guard let token = document["device"]?.stringValue, let device = service.device(for: token) else {
            return PushResponder.error(.badRequest("BadDeviceToken"), apnsID: nil)
        }
        guard let payload = document["payload"], payload.objectValue != nil else {
            return PushResponder.error(.badRequest("PayloadEmpty"), apnsID: nil)
        }
        let typeName = document["push_type"]?.stringValue ?? "alert"
        guard let pushType = PushType(rawValue: typeName) else {
            return PushResponder.error(.badRequest("InvalidPushType"), apnsID: nil)
        }
        // Which of the device's tokens it names: its VoIP one, its alert one, else one of its Live Activities'
        // (each kind is stored apart for an offline device, as APNs keeps one push per topic).
        let named = token.lowercased()
        let tokenKind: TokenKind =
            device.config.voipToken.lowercased() == named
            ? .voip : device.config.remoteToken.lowercased() == named ? .remote : .liveActivity
        let push = AcceptedPush(
            apnsID: PushService.newAPNsID(), token: token, tokenKind: tokenKind,
            pushType: pushType, priority: pushType == .background ? 5 : 10, payload: payload.serializedBytes())
        let result: JSON
        let uniqueID = PushService.newAPNsID()
        switch await service.deliverAndWait(push, to: device, uniqueID: uniqueID) {
        case .success(let recorded): result = recorded
        case .failure(let refusal): return PushResponder.error(refusal, apnsID: push.apnsID)
        }
        service.acknowledgements.watchAnswer(uniqueID, on: context.channel)
        // 202: not run here (yet): held for an offline device, delivered (or replaced, or expired) when it is back,
        // or left for the fleet's node its device went back to, which runs it.
        let elsewhere = result["held_offline"]?.boolValue == true || result["handed_back"]?.boolValue == true
        var response = PushResponder.json(result, status: elsewhere ? 202 : 200)
        response.headers[.init("apns-id")!] = push.apnsID
        if service.sendsUniqueID { response.headers[.init("apns-unique-id")!] = uniqueID }
        return response
    }
}
