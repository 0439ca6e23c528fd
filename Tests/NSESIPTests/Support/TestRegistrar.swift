import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NSECertificates

@testable import NSESIP

/// A small scripted SIP registrar for loopback tests (UDP, TCP or TLS).
final class TestRegistrar: @unchecked Sendable {
    enum Challenge: Sendable {
        case none
        case www(DigestAlgorithm)
        case proxy(DigestAlgorithm)
        case always(DigestAlgorithm)
    }

    struct Options: Sendable {
        var challenge: Challenge = .none
        var password = "secret"
        var realm = "example.org"
        var dropFirstRequests = 0
        var neverAnswer = false
        var sendMessagesAfterRegister = false
        /// The Call-ID of the second MESSAGE of that flow (e.g. one with a control character in it).
        var secondCallID = "call-B"
        var grantedExpires = 600
        /// Answer the first REGISTER with 100 Trying, ignore the next copy, answer the third.
        var provisionalFirst = false
        /// Reject shorter Expires with 423 and this Min-Expires.
        var minExpires: Int? = nil
        /// Offer an MD5 challenge before the configured one (client should prefer SHA-256).
        var offerMD5Too = false
        /// Stream transports: close the connection when a request arrives.
        var closeOnRequest = false
        /// UDP: send a malformed datagram before every reply.
        var garbageBeforeReplies = false
        /// Loopback address to listen on.
        var host = "127.0.0.1"
    }

    struct State {
        var requests: [SIPRequest] = []
        var datagramsReceived = 0
        var dropped = 0
        var issuedNonces: [String] = []
        var messageResponses: [SIPResponse] = []
        var messageFlowStarted = false
        var contactTarget: SIPURI?
    }

    let kind: SIPTransportKind
    let options: Options
    /// What a TLS registrar presents (localhost, 127.0.0.1), made in process for this registrar alone: a client pins
    /// it or trusts it as its CA.
    let certificate: SelfSignedCertificate
    private let lock = NIOLock()
    private var _state = State()
    private var channel: (any Channel)?
    private(set) var port = 0

    var state: State { lock.withLock { _state } }

    init(kind: SIPTransportKind, options: Options, certificate: SelfSignedCertificate) {
        self.kind = kind
        self.options = options
        self.certificate = certificate
    }

    var proxyURI: SIPURI {
        SIPURI(
            host: options.host, port: port, parameters: kind == .udp ? [] : [SIPParameter("transport", kind.rawValue)])
    }

    static func start(_ kind: SIPTransportKind, options: Options = Options(), group: any EventLoopGroup) async throws
        -> TestRegistrar
    {
        let registrar = TestRegistrar(kind: kind, options: options, certificate: try SelfSignedCertificate())
        switch kind {
        case .udp:
            let ch = try await DatagramBootstrap(group: group)
                .channelInitializer { ch in
                    ch.eventLoop.makeCompletedFuture {
                        try ch.pipeline.syncOperations.addHandler(UDPHandler(registrar: registrar))
                    }
                }
                .bind(host: options.host, port: 0).get()
            registrar.channel = ch
            registrar.port = ch.localAddress?.port ?? 0
        case .tcp, .tls:
            var sslContext: NIOSSLContext? = nil
            if kind == .tls {
                let cert = try NIOSSLCertificate(bytes: Array(registrar.certificate.certificatePEM.utf8), format: .pem)
                let key = try NIOSSLPrivateKey(bytes: Array(registrar.certificate.privateKeyPEM.utf8), format: .pem)
                let config = TLSConfiguration.makeServerConfiguration(
                    certificateChain: [.certificate(cert)], privateKey: .privateKey(key))
                sslContext = try NIOSSLContext(configuration: config)
            }
            let ctx = sslContext
            let ch = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { ch in
                    ch.eventLoop.makeCompletedFuture {
                        if let ctx { try ch.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: ctx)) }
                        try ch.pipeline.syncOperations.addHandler(ByteToMessageHandler(SIPMessageDecoder()))
                        try ch.pipeline.syncOperations.addHandler(StreamHandler(registrar: registrar))
                    }
                }
                .bind(host: options.host, port: 0).get()
            registrar.channel = ch
            registrar.port = ch.localAddress?.port ?? 0
        }
        return registrar
    }

    func stop() async {
        try? await channel?.close().get()
    }

    /// Polls `condition` every 10 ms for at most `timeout`.
    func waitUntil(timeout: Duration = .seconds(5), _ condition: (State) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(state) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(state)
    }

    // MARK: - scripted behaviour

    /// Handles one message and returns what to send back.
    func handle(_ message: SIPMessage, source: SocketAddress? = nil) -> [SIPMessage] {
        lock.withLock {
            _state.datagramsReceived += 1
            switch message {
            case .request(var request):
                // RFC 3581: fill in received/rport on the top Via.
                if let source, let ip = source.ipAddress, let port = source.port, var via = request.headers.topVia,
                    via.hasRport
                {
                    via.parameters.set("received", ip)
                    via.parameters.set("rport", String(port))
                    let rest = Array(request.headers.splitValues("Via").dropFirst())
                    request.headers.remove("Via")
                    for v in rest.reversed() { request.headers.prepend("Via", v) }
                    request.headers.prepend("Via", via.description)
                }
                return handleRequest(request)
            case .response(let response):
                return handleResponse(response)
            }
        }
    }

    private func handleRequest(_ request: SIPRequest) -> [SIPMessage] {
        _state.requests.append(request)
        guard request.method == "REGISTER" || request.method == "MESSAGE" else {
            return [.response(request.makeResponse(statusCode: 501))]
        }
        if _state.dropped < options.dropFirstRequests {
            _state.dropped += 1
            return []
        }
        if options.neverAnswer { return [] }
        if options.provisionalFirst {
            // 1st receipt: 100 Trying; 2nd: silence; 3rd and later: final response.
            switch _state.requests.count {
            case 1: return [.response(request.makeResponse(statusCode: 100))]
            case 2: return []
            default: break
            }
        }
        switch options.challenge {
        case .none:
            break
        case .www(let alg), .proxy(let alg), .always(let alg):
            let isProxy: Bool
            if case .proxy = options.challenge { isProxy = true } else { isProxy = false }
            var authorized = false
            if case .always = options.challenge {
                authorized = false
            } else if let header = request.headers[isProxy ? "Proxy-Authorization" : "Authorization"] {
                let verifier = DigestVerifier(realm: options.realm, algorithm: alg)
                authorized = _state.issuedNonces.contains { nonce in
                    verifier.verify(
                        authorization: header, method: request.method, password: options.password,
                        expectedUsername: request.headers.from?.uri.user, issuedNonce: nonce)
                }
            }
            if !authorized {
                let challenge = DigestVerifier(realm: options.realm, algorithm: alg).makeChallenge()
                _state.issuedNonces.append(challenge.nonce)
                var response = request.makeResponse(statusCode: isProxy ? 407 : 401, toTag: "srv1")
                if options.offerMD5Too {
                    let md5 = DigestVerifier(realm: options.realm, algorithm: .md5).makeChallenge()
                    _state.issuedNonces.append(md5.nonce)
                    response.headers.add(isProxy ? "Proxy-Authenticate" : "WWW-Authenticate", md5.description)
                }
                response.headers.add(isProxy ? "Proxy-Authenticate" : "WWW-Authenticate", challenge.description)
                return [.response(response)]
            }
        }
        if request.method == "MESSAGE" {
            return [.response(request.makeResponse(statusCode: 202, toTag: "srv1"))]
        }
        if let minimum = options.minExpires, let asked = request.headers.expires, asked < minimum {
            var response = request.makeResponse(statusCode: 423, toTag: "srv1")
            response.headers.add("Min-Expires", String(minimum))
            return [.response(response)]
        }
        var response = request.makeResponse(statusCode: 200, toTag: "srv1")
        let expires = options.minExpires ?? options.grantedExpires
        for contact in request.headers.contacts {
            var granted = contact
            granted.parameters.set("expires", String(expires))
            response.headers.add("Contact", granted.description)
        }
        var out: [SIPMessage] = [.response(response)]
        if options.sendMessagesAfterRegister, !_state.messageFlowStarted, let contact = request.headers.contacts.first {
            _state.messageFlowStarted = true
            _state.contactTarget = contact.uri
            out.append(.request(makeMessage(callID: "call-A", branch: "z9hG4bKmsgA", to: contact.uri)))
        }
        return out
    }

    private func handleResponse(_ response: SIPResponse) -> [SIPMessage] {
        _state.messageResponses.append(response)
        guard let target = _state.contactTarget else { return [] }
        switch _state.messageResponses.count {
        case 1:
            // Retransmit the first MESSAGE (same branch): it must be absorbed and answered again.
            return [.request(makeMessage(callID: "call-A", branch: "z9hG4bKmsgA", to: target))]
        case 2:
            return [.request(makeMessage(callID: options.secondCallID, branch: "z9hG4bKmsgB", to: target))]
        case 3:
            // Redelivery of call-A in a new transaction (new branch): answered, but not delivered twice.
            return [.request(makeMessage(callID: "call-A", branch: "z9hG4bKmsgA2", to: target))]
        default:
            return []
        }
    }

    private func makeMessage(callID: String, branch: String, to: SIPURI) -> SIPRequest {
        var request = SIPRequest(method: "MESSAGE", uri: to, body: Array("hello \(callID)".utf8))
        request.headers.add(
            "Via", "SIP/2.0/\(kind.viaToken) \(SIPSyntax.formatHost(options.host)):\(port);branch=\(branch)")
        request.headers.add("Max-Forwards", "70")
        request.headers.add("From", "<sip:alice@example.org>;tag=alice1")
        request.headers.add("To", "<\(to.addressOfRecord)>")
        request.headers.add("Call-ID", callID)
        request.headers.add("CSeq", "1 MESSAGE")
        request.headers.add("Content-Type", "text/plain")
        return request
    }

    // MARK: - NIO handlers

    final class UDPHandler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>
        let registrar: TestRegistrar
        init(registrar: TestRegistrar) { self.registrar = registrar }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            guard let message = try? SIPParser.parseDatagram(Array(envelope.data.readableBytesView)) else { return }
            let replies = registrar.handle(message, source: envelope.remoteAddress)
            if registrar.options.garbageBeforeReplies, !replies.isEmpty {
                let junk = AddressedEnvelope(
                    remoteAddress: envelope.remoteAddress, data: ByteBuffer(string: "NOT SIP AT ALL\r\n\r\n"))
                context.writeAndFlush(wrapOutboundOut(junk), promise: nil)
            }
            for reply in replies {
                let out = AddressedEnvelope(
                    remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: reply.serialized()))
                context.writeAndFlush(wrapOutboundOut(out), promise: nil)
            }
        }
    }

    final class StreamHandler: ChannelInboundHandler {
        typealias InboundIn = SIPMessage
        typealias OutboundOut = ByteBuffer
        let registrar: TestRegistrar
        init(registrar: TestRegistrar) { self.registrar = registrar }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let replies = registrar.handle(unwrapInboundIn(data), source: context.remoteAddress)
            if registrar.options.closeOnRequest {
                context.close(promise: nil)
                return
            }
            for reply in replies {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply.serialized())), promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
