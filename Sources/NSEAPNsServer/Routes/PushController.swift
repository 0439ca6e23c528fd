import Hummingbird
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NSEAPNs
import NSEJSON
import NSESystem

/// APNs's provider API, `POST /3/device/{token}`: injected faults first, then provider authentication (a client
/// certificate or a provider token), then APNs's rules (``APNsValidation``); 200 with `apns-id` (and
/// `apns-unique-id` in development) once the push is recorded and queued, the extension running afterwards on a worker thread. Every request goes
/// into the request log as received and answered, and is counted (``ServeMetrics``).
struct PushController {
    let service: PushService

    var endpoints: RouteCollection<PushRequestContext> {
        RouteCollection(context: PushRequestContext.self)
            .post(use: push)  // no token: APNs's MissingDeviceToken
            .post(":token", use: push)
    }

    /// What became of one request, for the request log.
    struct Answer {
        var response: Response
        var reason: String?
        var apnsID: String?
        var uniqueID: String?
        var faultID: Int?
        /// The connection was closed or the stream reset instead (an injected fault): the response is never written.
        var unanswered = false
        /// The stream was reset (an injected `rst_stream`).
        var reset = false
        /// The fleet's node that served the device and answered, when it was another.
        var forwardedTo: String?

        static func refused(_ error: APNsError, apnsID: String?) -> Answer {
            Answer(response: PushResponder.error(error, apnsID: apnsID), reason: error.reason, apnsID: apnsID)
        }
    }

    @Sendable func push(_ request: Request, context: PushRequestContext) async -> Response {
        let token = context.parameters.get("token") ?? ""
        var headers: APNsHeaders = request.apnsHeaders
        if let fleet = service.fleet {
            let vouched = fleet.forwardedIdentity(headers)
            headers = FleetHeaders.stripped(headers)
            if let vouched {
                // Another node of the fleet took this request for a device served here: it logged it, took the
                // fleet's faults and authenticated the provider.
                let body = try? await request.body.collect(upTo: PushResponder.maxBody)
                return await accept(
                    token: token, headers: headers, body: body.map { Array($0.readableBytesView) },
                    echoedID: Self.echoedID(headers.first(where: { $0.name == "apns-id" })?.value),
                    teamID: vouched.teamID, certificateBundleID: vouched.certificateBundleID, context: context,
                    forwarded: true
                ).response
            }
        }
        // A connection with a verified client certificate authenticates with it (`--client-ca`); one connection
        // uses one kind, as on APNs.
        let certificate = await ProviderIdentity.certificate(service: service, context: context)
        var entry = RequestLog.Entry(
            receivedAt: SystemClock.unixMilliseconds(), token: token, headers: headers,
            authentication: certificate != nil
                ? "certificate" : headers.contains(where: { $0.name == "authorization" }) ? "token" : "none",
            httpVersion: context.channel.parent == nil ? "1.1" : "2")
        // The body first, whatever the answer: the log has every request's payload size.
        let body = try? await request.body.collect(upTo: PushResponder.maxBody)
        let bytes = body.map { Array($0.readableBytesView) }
        let answer = await answerPush(bytes, token: token, headers: headers, certificate: certificate, context: context)
        entry.status = answer.unanswered ? nil : answer.response.status.code
        entry.reason = answer.reason
        entry.apnsID = answer.apnsID
        entry.uniqueID = answer.uniqueID
        entry.payloadBytes =
            bytes?.count ?? headers.first(where: { $0.name == "content-length" }).flatMap { Int($0.value) }
        entry.faultID = answer.faultID
        entry.streamReset = answer.reset
        entry.forwardedTo = answer.forwardedTo
        await service.logRequest(entry)
        service.metrics.answered(headers, status: entry.status, reason: answer.reason)
        return answer.response
    }

    private func answerPush(
        _ bytes: [UInt8]?, token: String, headers: APNsHeaders, certificate: NIOSSLCertificate?,
        context: PushRequestContext
    ) async -> Answer {
        // Every answer carries an apns-id, as APNs's do: the request's, else a new one (Apple: "If you don't specify
        // an apns-id field in your request, APNs creates a new UUID and returns it in this header").
        let echoedID = Self.echoedID(headers.first(where: { $0.name == "apns-id" })?.value)
        // Injected faults first: the server playing unavailable, then the first scripted rule for this token (the
        // fleet's, with `--database`: one round trip decides both).
        var fault: (id: Int, rule: FaultRule)?
        if let fleet = service.fleet {
            switch await Self.fleetFaults(fleet, token: token, service: service) {
            case nil: return .refused(.internalServerError, apnsID: echoedID)
            case .unavailable(let reason)?: return .refused(APNsError(503, reason), apnsID: echoedID)
            case .fault(let id, let rule)?: fault = (id, rule)
            case .none?: break
            }
            if let turnedAway = await capConnections(headers: headers, certificate: certificate, context: context) {
                return turnedAway
            }
        } else {
            if let unavailable = service.faults.unavailable { return .refused(unavailable, apnsID: echoedID) }
            if let turnedAway = await capConnections(headers: headers, certificate: certificate, context: context) {
                return turnedAway
            }
            fault = service.faults.take(token: token)
        }
        if let delay = fault?.rule.delay, delay > 0 { try? await Task.sleep(for: .milliseconds(Int(delay * 1000))) }
        var answer: Answer
        if let rule = fault?.rule, rule.goAway {
            await Self.goAway(context.channel, reason: rule.goAwayReason)
            answer = .refused(.shutdown, apnsID: echoedID)
            answer.reason = rule.goAwayReason
            answer.unanswered = true
        } else if let rule = fault?.rule, rule.resetStream {
            await Self.resetStream(context.channel)
            answer = .refused(.shutdown, apnsID: echoedID)
            answer.reason = nil
            answer.unanswered = true
            answer.reset = true
        } else if let scripted = fault?.rule.answer {
            answer = .refused(scripted, apnsID: echoedID)
            if fault?.rule.emptyBody == true || fault?.rule.malformedBody == true {
                var fields = HTTPFields()
                fields[.init("apns-id")!] = echoedID
                var body = ByteBuffer()
                if fault?.rule.malformedBody == true {
                    fields[.contentType] = "application/json"
                    body = ByteBuffer(string: "{\"reason\":\"\(scripted.reason.prefix(3))")
                }
                answer.response = Response(
                    status: HTTPResponse.Status(code: scripted.status), headers: fields,
                    body: ResponseBody(byteBuffer: body))
            }
        } else {
            answer = await authenticateAndAccept(
                bytes, token: token, headers: headers, echoedID: echoedID, certificate: certificate, context: context)
        }
        answer.faultID = fault?.id
        return answer
    }

    /// The apns-id every answer carries: the request's when it is a UUID, else a new one.
    private static func echoedID(_ given: String?) -> String {
        given.flatMap { APNsValidation.isUUID($0) ? $0 : nil } ?? PushService.newAPNsID()
    }

    /// The fleet's decision for one push; nil (logged) when the database cannot answer: the push is answered 500
    /// InternalServerError, as APNs may, rather than taken without the faults a test scripted.
    private static func fleetFaults(_ fleet: any FleetState, token: String, service: PushService) async
        -> FleetFaultDecision?
    {
        do { return try await fleet.takeFault(token: token) } catch {
            service.logger.error("fleet fault rules not read", metadata: ["fleet.error": .string(error.description)])
            return nil
        }
    }

    /// A `max_connections` rule: a connection past its provider's cap is sent GOAWAY(ENHANCE_YOUR_CALM), with
    /// `{"reason":"TooManyConnections"}` (nse's word: APNs documents no cap), and closed; its push is not taken.
    private func capConnections(headers: APNsHeaders, certificate: NIOSSLCertificate?, context: PushRequestContext)
        async -> Answer?
    {
        guard let (id, cap) = service.faults.connectionCap else { return nil }
        let provider = Self.provider(headers: headers, certificate: certificate, context: context)
        guard service.providerConnections.claim(context.connection, provider: provider, cap: cap) == .overCap else {
            return nil
        }
        let reason = "TooManyConnections"
        await Self.goAway(context.channel, reason: reason, code: .enhanceYourCalm)
        var answer = Answer.refused(.shutdown, apnsID: nil)
        answer.reason = reason
        answer.unanswered = true
        answer.faultID = id
        return answer
    }

    /// Whose connection this is: the team its provider token names (unverified), the app its certificate names, or
    /// the client's address.
    private static func provider(headers: APNsHeaders, certificate: NIOSSLCertificate?, context: PushRequestContext)
        -> String
    {
        if let certificate, case .success(let read) = ProviderCertificate.read(certificate) {
            return "certificate:" + read.bundleID
        }
        if let authorization = headers.first(where: { $0.name == "authorization" })?.value,
            let token = ProviderTokenVerifier.bearerToken(authorization),
            let team = ProviderTokenVerifier.issuer(of: token)
        {
            return "team:" + team
        }
        return "address:" + (context.connection.channel?.remoteAddress?.ipAddress ?? "unknown")
    }

    /// Provider authentication (a verified client certificate, else a provider token), then APNs's rules.
    private func authenticateAndAccept(
        _ bytes: [UInt8]?, token: String, headers: APNsHeaders, echoedID: String?, certificate: NIOSSLCertificate?,
        context: PushRequestContext
    ) async -> Answer {
        let provider: ProviderIdentity
        switch await ProviderIdentity.authenticate(
            headers: headers, certificate: .some(certificate), service: service, context: context)
        {
        case .failure(let error): return .refused(error, apnsID: echoedID)
        case .success(let identity): provider = identity
        }
        return await accept(
            token: token, headers: headers, body: bytes, echoedID: echoedID, teamID: provider.teamID,
            certificateBundleID: provider.certificateBundleID, context: context)
    }

    private func accept(
        token: String, headers: APNsHeaders, body: [UInt8]?, echoedID: String?, teamID: String?,
        certificateBundleID: String?, context: PushRequestContext, forwarded: Bool = false
    ) async -> Answer {
        // Another node's device: that node answers (nil: this node's, maybe taken over meanwhile, or nobody's).
        if !forwarded, service.fleet != nil,
            let (outcome, peer) = await service.sendOn(
                ForwardedPush(
                    token: token, headers: headers, body: body ?? [],
                    identity: ForwardedIdentity(teamID: teamID, certificateBundleID: certificateBundleID)))
        {
            return answer(outcome, from: peer, echoedID: echoedID)
        }
        let verdict = APNsValidation.validate(
            token: token, headers: headers, body: body, device: service.device(for:), newID: PushService.newAPNsID,
            teamID: teamID, certificateBundleID: certificateBundleID)
        switch verdict {
        case .failure(let error):
            // Sent here by a node that still thought the device this node's: it was given back since (docs/serve.md,
            // "Coming back"). That node asks the one serving it now; no client ever sees this answer. (Asked only
            // of a token not served here, so a forwarded push pays no second lookup.)
            if forwarded, error == .badRequest("BadDeviceToken"), let fleet = service.fleet,
                await fleet.owner(of: token) != nil
            {
                return .refused(FleetHeaders.misdirected, apnsID: echoedID)
            }
            return .refused(error, apnsID: echoedID)
        case .success(let (push, device)):
            // As APNs's development environment does: an id for the delivery log of Apple's Push Console, sent only
            // there. nse always makes one: it finds the push again if its answer cannot be written
            // (``Acknowledgements``).
            let uniqueID = PushService.newAPNsID()
            if let refusal = await service.enqueue(push, to: device, uniqueID: uniqueID) {
                return .refused(refusal, apnsID: push.apnsID)
            }
            service.acknowledgements.watchAnswer(uniqueID, on: context.channel)
            var fields = HTTPFields()
            fields[.init("apns-id")!] = push.apnsID
            let sentUniqueID = service.sendsUniqueID ? uniqueID : nil
            if let sentUniqueID { fields[.init("apns-unique-id")!] = sentUniqueID }
            return Answer(
                response: Response(status: .ok, headers: fields), apnsID: push.apnsID, uniqueID: sentUniqueID)
        }
    }

    /// What another node did with a push sent on to it (``PushService/sendOn(_:)``): its answer as it is; 503
    /// `ServiceUnavailable` when it could not be reached within the takeover window; 500 `InternalServerError` when
    /// the push went out and got no answer (it may have been taken).
    private func answer(_ outcome: ForwardOutcome, from peer: FleetPeer, echoedID: String?) -> Answer {
        var answer: Answer
        switch outcome {
        case .answered(let status, let headers, let body):
            answer = Answer(
                response: PushResponder.relayed(status: status, headers: headers, body: body),
                reason: (try? JSON.parse(body))?["reason"]?.stringValue,
                apnsID: headers.first(where: { $0.name == "apns-id" })?.value,
                uniqueID: headers.first(where: { $0.name == "apns-unique-id" })?.value)
        case .lost(let why):
            service.logger.error(
                "forwarded push not answered",
                metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
            answer = .refused(.internalServerError, apnsID: echoedID)
        case .unreachable(let why):
            service.logger.warning(
                "push not forwarded: node unreachable",
                metadata: ["fleet.node": .string(peer.node), "fleet.error": .string(why)])
            answer = .refused(.serviceUnavailable, apnsID: echoedID)
        }
        answer.forwardedTo = peer.node
        return answer
    }

    /// An injected `rst_stream`: the request's HTTP/2 stream is reset with INTERNAL_ERROR, written below the HTTP
    /// codec (by the stream's first handler, ``EndStreamFolding``); an HTTP/1.1 connection is closed. Returns once
    /// the request's channel is closed.
    private static func resetStream(_ channel: any Channel) async {
        if channel.parent != nil {
            channel.eventLoop.execute {
                guard let first = try? channel.pipeline.syncOperations.context(handlerType: EndStreamFolding.self)
                else { return channel.close(promise: nil) }
                first.writeAndFlush(NIOAny(HTTP2Frame.FramePayload.rstStream(.internalError)), promise: nil)
            }
        } else {
            channel.close(promise: nil)
        }
        try? await channel.closeFuture.get()
    }

    /// An injected GOAWAY: the HTTP/2 connection a stream belongs to is told to go away (its last stream taken is
    /// the one before this one, which is never answered) and closed; an HTTP/1.1 connection is closed. Returns once
    /// the request's channel is closed.
    private static func goAway(_ channel: any Channel, reason: String, code: HTTP2ErrorCode = .noError) async {
        if let connection = channel.parent {
            let streamID = try? await channel.getOption(HTTP2StreamChannelOptions.streamID).get()
            connection.eventLoop.execute {
                guard let manager = try? connection.pipeline.syncOperations.handler(type: HTTP2ConnectionManager.self)
                else { return connection.close(promise: nil) }
                manager.goAway(before: streamID, reason: reason, code: code)
            }
        } else {
            channel.close(promise: nil)
        }
        try? await channel.closeFuture.get()
    }
}
