import Glibc
public import Logging
public import NIOCore
import NIOPosix
import NIOSSL

/// A client connection (UDP socket, TCP or TLS stream) carrying SIP messages to one remote endpoint.
public final class SIPTransport: Sendable {
    /// The transport protocol.
    public let kind: SIPTransportKind
    /// The local socket address (for Via sent-by and Contact).
    public let localAddress: SocketAddress
    /// The remote socket address.
    public let remoteAddress: SocketAddress
    /// Messages received on this connection; finishes when the connection closes, throwing a `SIPError` if it failed.
    public let incoming: AsyncThrowingStream<SIPMessage, any Error>
    /// The size limits applied to received and sent messages.
    public let limits: SIPParserLimits
    private let channel: any Channel
    private let logger: Logger

    private init(
        kind: SIPTransportKind, channel: any Channel, incoming: AsyncThrowingStream<SIPMessage, any Error>,
        limits: SIPParserLimits, logger: Logger
    ) throws(SIPError) {
        guard let local = channel.localAddress, let remote = channel.remoteAddress else {
            throw SIPError(.transport, "connected socket has no address")
        }
        self.kind = kind
        self.channel = channel
        self.localAddress = local
        self.remoteAddress = remote
        self.incoming = incoming
        self.limits = limits
        self.logger = logger
    }

    /// The local IP address as text (IPv6 without brackets).
    public var localHost: String { localAddress.ipAddress ?? "127.0.0.1" }
    /// The local port.
    public var localPort: Int { localAddress.port ?? 0 }

    /// Opens a connection to an endpoint on the given event loop group.
    public static func connect(
        to endpoint: SIPEndpoint, tls: SIPTLSOptions = SIPTLSOptions(),
        limits: SIPParserLimits = .default, group: any EventLoopGroup,
        connectTimeout: Duration = .seconds(5), logger: Logger
    ) async throws(SIPError) -> SIPTransport {
        let (stream, continuation) = AsyncThrowingStream<SIPMessage, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(256))
        let channel: any Channel
        // An IP literal is connected to directly: no resolver, no Happy Eyeballs timers (a proxy like
        // sip:127.0.0.1:5060 is the common case, and the extension has a budget).
        let literal =
            isIPLiteral(endpoint.host) ? try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) : nil
        do {
            switch endpoint.transport {
            case .udp:
                let bootstrap = DatagramBootstrap(group: group)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                SIPDatagramClientHandler(continuation: continuation, limits: limits, logger: logger))
                        }
                    }
                channel = try await
                    (literal.map { bootstrap.connect(to: $0) }
                    ?? bootstrap.connect(host: endpoint.host, port: endpoint.port)).get()
            case .tcp, .tls:
                var sslContext: NIOSSLContext? = nil
                var pinned: NIOSSLCertificate? = nil
                var sni: String? = nil
                if endpoint.transport == .tls {
                    (sslContext, pinned) = try makeTLSContext(tls)
                    let name = tls.serverName ?? endpoint.host
                    if !isIPLiteral(name) { sni = name }
                }
                let context = sslContext
                let pin = pinned
                let serverName = sni
                let timeoutMs = Int64(
                    connectTimeout.components.seconds * 1000 + connectTimeout.components.attoseconds
                        / 1_000_000_000_000_000)
                let bootstrap = ClientBootstrap(group: group)
                    .connectTimeout(.milliseconds(timeoutMs))
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let ops = channel.pipeline.syncOperations
                            if let context {
                                let handler: NIOSSLClientHandler
                                if let pin {
                                    handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) {
                                        chain, promise in
                                        promise.succeed(chain.contains(pin) ? .certificateVerified : .failed)
                                    }
                                } else {
                                    handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                                }
                                try ops.addHandler(handler)
                            }
                            try ops.addHandler(ByteToMessageHandler(SIPMessageDecoder(limits: limits)))
                            try ops.addHandler(SIPStreamClientHandler(continuation: continuation, logger: logger))
                        }
                    }
                channel = try await
                    (literal.map { bootstrap.connect(to: $0) }
                    ?? bootstrap.connect(host: endpoint.host, port: endpoint.port)).get()
            }
        } catch let error as SIPError {
            continuation.finish()
            throw error
        } catch {
            continuation.finish()
            throw SIPError(.transport, "cannot connect to \(endpoint): \(error)")
        }
        let transport = try SIPTransport(
            kind: endpoint.transport, channel: channel, incoming: stream, limits: limits, logger: logger)
        logger.debug(
            "sip transport connected",
            metadata: [
                "sip.transport": "\(endpoint.transport.rawValue)",
                "sip.local": "\(transport.localAddress)",
                "sip.remote": "\(transport.remoteAddress)",
            ])
        return transport
    }

    /// Sends one message; for UDP one datagram, for streams the wire bytes.
    public func send(_ message: SIPMessage) async throws(SIPError) {
        let bytes = message.serialized()
        try await send(bytes: bytes)
    }

    /// Sends pre-serialized wire bytes.
    public func send(bytes: [UInt8]) async throws(SIPError) {
        guard bytes.count <= limits.maxMessageSize else {
            throw SIPError(
                .messageTooLarge,
                "outgoing message of \(bytes.count) bytes exceeds the \(limits.maxMessageSize)-byte limit")
        }
        let buffer = ByteBuffer(bytes: bytes)
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch {
            throw SIPError(.transport, "send failed on \(kind.rawValue) transport: \(error)")
        }
    }

    /// True while the underlying channel is open.
    public var isActive: Bool { channel.isActive }

    /// Closes the connection; the `incoming` stream finishes.
    public func close() async {
        try? await channel.close().get()
    }

    static func isIPLiteral(_ host: String) -> Bool {
        if host.utf8.contains(0x3A) { return true }
        return host.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }
    }

    static func makeTLSContext(_ options: SIPTLSOptions) throws(SIPError) -> (NIOSSLContext, NIOSSLCertificate?) {
        var config = TLSConfiguration.makeClientConfiguration()
        config.certificateVerification = options.verifyHostname ? .fullVerification : .noHostnameVerification
        var pinned: NIOSSLCertificate? = nil
        do {
            switch options.trust {
            case .systemDefault:
                config.trustRoots = .default
            case .caFile(let path):
                config.trustRoots = .file(path)
            case .pinnedCertificateFile(let path):
                let certs = try NIOSSLCertificate.fromPEMFile(path)
                guard let first = certs.first else {
                    throw SIPError(.invalidArgument, "pinned certificate file has no certificate")
                }
                pinned = first
                config.trustRoots = .certificates([first])
            case .pinnedCertificatePEM(let bytes):
                let cert = try NIOSSLCertificate(bytes: bytes, format: .pem)
                pinned = cert
                config.trustRoots = .certificates([cert])
            }
            return (try NIOSSLContext(configuration: config), pinned)
        } catch let error as SIPError {
            throw error
        } catch {
            throw SIPError(.invalidArgument, "cannot build TLS configuration: \(error)")
        }
    }
}

/// Delivers decoded stream messages to an AsyncStream.
final class SIPStreamClientHandler: ChannelInboundHandler {
    typealias InboundIn = SIPMessage
    let continuation: AsyncThrowingStream<SIPMessage, any Error>.Continuation
    let logger: Logger

    init(continuation: AsyncThrowingStream<SIPMessage, any Error>.Continuation, logger: Logger) {
        self.continuation = continuation
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        continuation.yield(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        continuation.finish()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let sslError = error as? NIOSSLError, case .uncleanShutdown = sslError {
            // Peers often close TCP without a TLS close_notify; treat it as an ordinary close.
            logger.debug("sip tls peer closed without close_notify")
        } else {
            logger.warning("sip stream error, closing connection", metadata: ["sip.error": "\(error)"])
        }
        let failure: SIPError
        if let sipError = error as? SIPError {
            failure = sipError
        } else if error is NIOSSLError || error is BoringSSLError {
            failure = SIPError(.transport, "TLS failure: \(error)")
        } else {
            failure = SIPError(.transport, "connection failed: \(error)")
        }
        continuation.finish(throwing: failure)
        context.close(promise: nil)
    }
}

/// Parses each received datagram as one SIP message; malformed datagrams are dropped.
final class SIPDatagramClientHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let continuation: AsyncThrowingStream<SIPMessage, any Error>.Continuation
    let limits: SIPParserLimits
    let logger: Logger

    init(continuation: AsyncThrowingStream<SIPMessage, any Error>.Continuation, limits: SIPParserLimits, logger: Logger)
    {
        self.continuation = continuation
        self.limits = limits
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let bytes = Array(envelope.data.readableBytesView)
        // Keep-alive CRLFs are ignored.
        if bytes.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { return }
        do {
            continuation.yield(try SIPParser.parseDatagram(bytes, limits: limits))
        } catch {
            logger.warning(
                "dropping malformed sip datagram", metadata: ["sip.error": "\(error)", "sip.size": "\(bytes.count)"])
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable on a connected socket means nobody listens: fail fast (RFC 3261 §18.4).
        if let ioError = error as? IOError, ioError.errnoCode == ECONNREFUSED {
            logger.debug("sip datagram destination unreachable")
            continuation.finish(
                throwing: SIPError(.transport, "destination port unreachable (ICMP connection refused)"))
            context.close(promise: nil)
            return
        }
        // Other errors are transient; the transaction timers decide the outcome.
        logger.debug("sip datagram socket error", metadata: ["sip.error": "\(error)"])
    }
}
