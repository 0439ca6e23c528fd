public import Hummingbird
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NSEAPNs
import NSEDevice
import NSEJSON
import NSEPayload
import NSESystem
import ServiceLifecycle

/// The HTTP side of `nse serve`: APNs's `POST /3/device/{token}` and nse's `/v1` endpoints.
///
/// - `POST /3/device/{token}`: provider authentication when configured, then APNs's rules (``APNsValidation``);
///   200 with `apns-id` and `apns-unique-id` once queued, the extension runs afterwards on a worker thread.
/// - `GET /v1/devices`: the served devices and their tokens.
/// - `GET /v1/devices/{token}/notifications[?limit=N]`: recorded results, newest first.
/// - `GET /v1/devices/{token}/attachments/{request}/{file}`: a file of the device's attachment store, for the page
///   (``AttachmentFiles``).
/// - `GET /v1/events[?device=TOKEN…]`: every recorded result as a server-sent event, live.
/// - `POST /v1/notify` `{"device": TOKEN, "payload": {…}, "push_type": "alert"}`: waits, answers the result.
public struct PushResponder: HTTPResponder {
    public typealias Context = PushRequestContext
    public let service: PushService
    /// Seconds between the comment lines that keep an idle event stream open through proxies.
    static let keepAliveSeconds: UInt64 = 15
    /// The largest body read: the VoIP limit; anything longer is `PayloadTooLarge` whatever the push type.
    static var maxBody: Int { PushType.voip.payloadLimit }
    /// The methods a known path answers `405 MethodNotAllowed` to when they are not its own. Hummingbird's router
    /// answers a known path with an unknown method as it answers an unknown path (404), and APNs does not.
    static let otherMethods: [HTTPRequest.Method] = [
        .get, .head, .post, .put, .delete, .patch, .options, .trace, .connect,
    ]

    private let router: RouterResponder<Context>

    public init(service: PushService) {
        self.service = service
        var routes: [Route] = [
            (
                "/3/device", .post,
                { request, context in await Self.push(request, token: "", context: context, service: service) }
            ),
            (
                "/3/device/:token", .post,
                { request, context in
                    await Self.push(
                        request, token: context.parameters.get("token") ?? "", context: context, service: service)
                }
            ),
            ("/", .get, { _, _ in await Self.page(service: service) }),
            ("/v1/events", .get, { request, _ in Self.events(request, service: service) }),
            (
                "/v1/devices", .get,
                { _, _ in
                    Self.json(
                        .array(
                            service.devices.all.map { device in
                                var summary = Self.summary(device).objectValue ?? JSONObject()
                                summary["held"] = .int(service.heldCount(for: device))
                                return .object(summary)
                            }))
                }
            ),
            (
                "/v1/devices/:token/notifications", .get,
                { request, context in
                    await Self.results(request, token: context.parameters.get("token") ?? "", service: service)
                }
            ),
            (
                "/v1/devices/:token/attachments/:request/:file", .get,
                { _, context in
                    await AttachmentFiles.respond(
                        token: context.parameters.get("token") ?? "", request: context.parameters.get("request") ?? "",
                        file: context.parameters.get("file") ?? "", service: service)
                }
            ),
            (
                "/v1/notify", .post,
                { request, context in await Self.notify(request, context: context, service: service) }
            ),
        ]
        routes += Self.controlRoutes(service)
        let router = Router(context: Context.self)
        router.add(middleware: BadPath())
        var methods: [String: Set<HTTPRequest.Method>] = [:]
        for route in routes {
            router.on(route.path, method: route.method, use: route.handler)
            methods["\(route.path)", default: []].insert(route.method)
        }
        var answered = Set<String>()
        for route in routes where answered.insert("\(route.path)").inserted {
            for method in Self.otherMethods where !(methods["\(route.path)"] ?? []).contains(method) {
                router.on(route.path, method: method) { _, _ in Self.error(.methodNotAllowed, apnsID: nil) }
            }
        }
        self.router = router.buildResponder()
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        var response = try await router.respond(to: request, context: context)
        // HEAD is answered with the head alone (RFC 9110 §9.3.2). HTTP/1.1's encoder drops the body itself; over
        // HTTP/2 a body would be DATA on a stream that must carry none, which NIOHTTP2 refuses.
        if request.method == .head { response.body = ResponseBody() }
        return response
    }

    /// APNs's answer to a path it does not serve, in place of the router's plain 404.
    private struct BadPath: RouterMiddleware {
        typealias Context = PushRequestContext
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws -> Response
        {
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound {
                return PushResponder.error(.badPath, apnsID: nil)
            }
        }
    }

    /// What became of one `POST /3/device` request, for the request log.
    struct PushAnswer {
        var response: Response
        var reason: String?
        var apnsID: String?
        var uniqueID: String?
        var faultID: Int?
        /// The connection was closed instead (an injected GOAWAY): the response is never written.
        var unanswered = false

        static func refused(_ error: APNsError, apnsID: String?) -> PushAnswer {
            PushAnswer(response: PushResponder.error(error, apnsID: apnsID), reason: error.reason, apnsID: apnsID)
        }
    }

    /// `POST /3/device/{token}`: answered, then written to the request log as received and answered.
    private static func push(_ request: Request, token: String, context: Context, service: PushService) async
        -> Response
    {
        let headers: APNsHeaders = request.headers.map { (name: $0.name.canonicalName.lowercased(), value: $0.value) }
        // A connection with a verified client certificate authenticates with it (`--client-ca`); one connection
        // uses one kind, as on APNs.
        var certificate: NIOSSLCertificate?
        if service.certificates != nil {
            certificate = try? await (context.channel.parent ?? context.channel).nioSSL_peerCertificate().get()
        }
        var entry = RequestLog.Entry(
            receivedAt: SystemClock.unixMilliseconds(), token: token, headers: headers,
            authentication: certificate != nil
                ? "certificate" : headers.contains(where: { $0.name == "authorization" }) ? "token" : "none",
            httpVersion: context.channel.parent == nil ? "1.1" : "2")
        // The body first, whatever the answer: the log has every request's payload size.
        let body = try? await request.body.collect(upTo: Self.maxBody)
        let bytes = body.map { Array($0.readableBytesView) }
        let answer = await Self.answerPush(
            bytes, token: token, headers: headers, certificate: certificate, context: context, service: service)
        entry.status = answer.unanswered ? nil : answer.response.status.code
        entry.reason = answer.reason
        entry.apnsID = answer.apnsID
        entry.uniqueID = answer.uniqueID
        entry.payloadBytes =
            bytes?.count ?? headers.first(where: { $0.name == "content-length" }).flatMap { Int($0.value) }
        entry.faultID = answer.faultID
        service.requests.record(entry)
        return answer.response
    }

    private static func answerPush(
        _ bytes: [UInt8]?, token: String, headers: APNsHeaders, certificate: NIOSSLCertificate?, context: Context,
        service: PushService
    ) async -> PushAnswer {
        let givenID = headers.first(where: { $0.name == "apns-id" })?.value
        // Every answer carries an apns-id, as APNs's do: the request's, else a new one (Apple: "If you don't specify
        // an apns-id field in your request, APNs creates a new UUID and returns it in this header").
        let echoedID = givenID.flatMap { APNsValidation.isUUID($0) ? $0 : nil } ?? PushService.newAPNsID()
        // Injected faults first: the server playing unavailable, then the first scripted rule for this token.
        if let unavailable = service.faults.unavailable { return .refused(unavailable, apnsID: echoedID) }
        let fault = service.faults.take(token: token)
        if let delay = fault?.rule.delay, delay > 0 { try? await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
        var answer: PushAnswer
        if let rule = fault?.rule, rule.goAway {
            await Self.goAway(context.channel, reason: rule.goAwayReason)
            answer = .refused(.shutdown, apnsID: echoedID)
            answer.reason = rule.goAwayReason
            answer.unanswered = true
        } else if let scripted = fault?.rule.answer {
            answer = .refused(scripted, apnsID: echoedID)
        } else {
            answer = await Self.authenticateAndAccept(
                bytes, token: token, headers: headers, echoedID: echoedID, certificate: certificate, context: context,
                service: service)
        }
        answer.faultID = fault?.id
        return answer
    }

    /// Provider authentication (a verified client certificate, else a provider token), then APNs's rules.
    private static func authenticateAndAccept(
        _ bytes: [UInt8]?, token: String, headers: APNsHeaders, echoedID: String?, certificate: NIOSSLCertificate?,
        context: Context, service: PushService
    ) async -> PushAnswer {
        var teamID: String?
        var certificateBundleID: String?
        if let certificates = service.certificates, let certificate {
            switch certificates.authenticate(certificate) {
            case .failure(let error): return .refused(error, apnsID: echoedID)
            case .success(let read): certificateBundleID = read.bundleID
            }
        } else if let authentication = service.authentication {
            let authorization = headers.first(where: { $0.name == "authorization" })?.value
            switch await authentication.authenticate(
                authorization: authorization, connection: context.connection,
                forwardedClient: ProviderAuthentication.forwardedClient(in: headers))
            {
            case .failure(let error): return .refused(error, apnsID: echoedID)
            case .success(let claims): teamID = claims.teamID
            }
        } else if service.certificates != nil {
            // Certificates required and none given, and no key for tokens either.
            return .refused(APNsError(403, ProviderToken.Rejection.missing.rawValue), apnsID: echoedID)
        }
        return await Self.accept(
            token: token, headers: headers, body: bytes, echoedID: echoedID, teamID: teamID,
            certificateBundleID: certificateBundleID, context: context, service: service)
    }

    private static func accept(
        token: String, headers: APNsHeaders, body: [UInt8]?, echoedID: String?, teamID: String?,
        certificateBundleID: String?, context: Context, service: PushService
    ) async -> PushAnswer {
        let verdict = APNsValidation.validate(
            token: token, headers: headers, body: body, device: service.device(for:), newID: PushService.newAPNsID,
            teamID: teamID, certificateBundleID: certificateBundleID)
        switch verdict {
        case .failure(let error):
            return .refused(error, apnsID: echoedID)
        case .success(let (push, device)):
            // As APNs's development environment does: an id for the delivery log of Apple's Push Console. nse also
            // uses it to find the push again if its answer cannot be written (``Acknowledgements``).
            let uniqueID = PushService.newAPNsID()
            if let refusal = await service.enqueue(push, to: device, uniqueID: uniqueID) {
                return .refused(refusal, apnsID: push.apnsID)
            }
            watchAnswer(uniqueID, on: context.channel, service: service)
            var fields = HTTPFields()
            fields[.init("apns-id")!] = push.apnsID
            fields[.init("apns-unique-id")!] = uniqueID
            return PushAnswer(response: Response(status: .ok, headers: fields), apnsID: push.apnsID, uniqueID: uniqueID)
        }
    }

    /// An injected GOAWAY: the HTTP/2 connection a stream belongs to is told to go away (its last stream taken is
    /// the one before this one, which is never answered) and closed; an HTTP/1.1 connection is closed. Returns once
    /// the request's channel is closed.
    private static func goAway(_ channel: any Channel, reason: String) async {
        if let connection = channel.parent {
            let streamID = try? await channel.getOption(HTTP2StreamChannelOptions.streamID).get()
            connection.eventLoop.execute {
                guard let manager = try? connection.pipeline.syncOperations.handler(type: HTTP2ConnectionManager.self)
                else { return connection.close(promise: nil) }
                manager.goAway(before: streamID, reason: reason)
            }
        } else {
            channel.close(promise: nil)
        }
        try? await channel.closeFuture.get()
    }

    /// A request channel that closes before the answer's head was even written leaves the push unacknowledged.
    /// One close callback per channel, however many pushes it carries (``Acknowledgements/watch(_:on:)``).
    private static func watchAnswer(_ uniqueID: String, on channel: any Channel, service: PushService) {
        let id = ObjectIdentifier(channel)
        guard service.acknowledgements.watch(uniqueID, on: id) else { return }
        // Weak: a channel that outlives the service (HummingbirdTesting's request channels are never closed) must
        // not keep the service's store and store threads alive.
        channel.closeFuture.whenComplete { [weak acknowledgements = service.acknowledgements] _ in
            acknowledgements?.channelClosed(id)
        }
    }

    /// `GET /v1/events[?device=TOKEN&device=TOKEN2]`: a text/event-stream of `notification` events, one per
    /// recorded result, until the client goes or the server stops.
    private static func events(_ request: Request, service: PushService) -> Response {
        let tokens = request.uri.queryParameters.getAll("device").map { String($0) }
        var followed: Set<String>?
        if !tokens.isEmpty {
            var set = Set<String>()
            for token in tokens {
                guard let device = service.device(for: token) else {
                    return Self.error(.badRequest("BadDeviceToken"), apnsID: nil)
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

    static func summary(_ device: Device) -> JSON {
        [
            "directory": .string(device.directory), "bundle_id": .string(device.config.bundleID),
            "team_id": .string(device.config.teamID), "remote_token": .string(device.config.remoteToken),
            "voip_token": .string(device.config.voipToken),
            "uninstalled_at": device.config.uninstalledAt.map(JSON.int) ?? .null,
            "callback_url": device.config.callbackURL.map(JSON.string) ?? .null,
            "online": .bool(device.config.online),
        ]
    }

    private static func results(_ request: Request, token: String, service: PushService) async -> Response {
        guard let device = service.device(for: token) else {
            return Self.error(.badRequest("BadDeviceToken"), apnsID: nil)
        }
        var limit = 100
        if let text = request.uri.queryParameters["limit"] {
            guard let parsed = Int(text), parsed >= 0, parsed <= 100_000 else {
                return Self.error(.badRequest("BadLimit"), apnsID: nil)
            }
            limit = parsed
        }
        var since: Int64 = 0
        if let text = request.uri.queryParameters["since"] {
            guard let parsed = Int64(text), parsed >= 0 else { return Self.error(.badRequest("BadSince"), apnsID: nil) }
            since = parsed
        }
        // The first page is read before the answer starts, so a store that cannot be read gets a 500. A longer
        // answer is then streamed page by page: its memory is one page's whatever `limit` is.
        let pageRows = ResultStore.pageRows
        let first: [JSON]
        do {
            first = try await service.results(for: device, limit: min(limit, pageRows), since: since)
        } catch {
            service.logger.error(
                "results not readable",
                metadata: ["device": .string(device.directory), "store-error": .string("\(error)")])
            return Self.error(.internalServerError, apnsID: nil)
        }
        guard limit > pageRows, first.count == pageRows, let firstBefore = first.last?["id"]?.intValue else {
            return Self.json(.array(first))
        }
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        let body = ResponseBody { [limit, since] writer in
            try await writer.write(Self.elements(first, opening: "["))
            var remaining = limit - first.count
            var before = firstBefore
            while remaining > 0 {
                let page: [JSON]
                do {
                    page = try await service.results(
                        for: device, limit: min(remaining, pageRows), since: since, before: before)
                } catch {
                    // The head has gone: the answer can only be cut off, which the client sees as an error.
                    service.logger.error(
                        "results not readable: answer cut off",
                        metadata: ["device": .string(device.directory), "store-error": .string("\(error)")])
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

    private static func notify(_ request: Request, context: Context, service: PushService) async -> Response {
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
        guard let pushType = PushType(rawValue: typeName) else {
            return Self.error(.badRequest("InvalidPushType"), apnsID: nil)
        }
        let push = AcceptedPush(
            apnsID: PushService.newAPNsID(), token: token,
            tokenKind: device.config.voipToken.lowercased() == token.lowercased() ? .voip : .remote,
            pushType: pushType, priority: pushType == .background ? 5 : 10, payload: payload.serializedBytes())
        let result: JSON
        let uniqueID = PushService.newAPNsID()
        switch await service.deliverAndWait(push, to: device, uniqueID: uniqueID) {
        case .success(let recorded): result = recorded
        case .failure(let refusal): return Self.error(refusal, apnsID: push.apnsID)
        }
        watchAnswer(uniqueID, on: context.channel, service: service)
        // 202: held for an offline device, delivered (or replaced, or expired) when it is back.
        var response = Self.json(result, status: result["held_offline"]?.boolValue == true ? 202 : 200)
        response.headers[.init("apns-id")!] = push.apnsID
        response.headers[.init("apns-unique-id")!] = uniqueID
        return response
    }

    /// The most phones the page draws (a server of 10,000 devices shows its first ones).
    static let pagePhones = 64
    /// The notifications drawn per phone.
    static let pageNotifications = 20

    /// `GET /`: the lock screens (``LockScreenPage``), from the results recorded so far.
    private static func page(service: PushService) async -> Response {
        var phones: [LockScreenPage.Phone] = []
        for device in service.devices.first(Self.pagePhones) {
            let results = (try? await service.results(for: device, limit: Self.pageNotifications, since: 0)) ?? []
            phones.append(LockScreenPage.Phone(device: device, results: results))
        }
        var fields = HTTPFields()
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(string: LockScreenPage.render(phones))))
    }

    /// APNs's error answer: the status and `{"reason": …}`.
    static func error(_ error: APNsError, apnsID: String?) -> Response {
        var body: JSONObject = ["reason": .string(error.reason)]
        if let timestamp = error.timestamp { body["timestamp"] = .int(timestamp) }
        var response = json(.object(body), status: error.status)
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
