import NIOCore
import NIOPosix
import NIOSSL
import Logging
import NSESIP
import Synchronization

private let flowCounter = Atomic<UInt64>(0)

/// A path to a peer: one TCP/TLS connection, or a UDP listener plus the peer's source address (rport/received).
final class ServerFlow: Sendable, CustomStringConvertible {
    let key: String
    let kind: SIPTransportKind
    let channel: any Channel
    let remote: SocketAddress
    let local: SocketAddress?

    init(kind: SIPTransportKind, channel: any Channel, remote: SocketAddress, local: SocketAddress?) {
        self.kind = kind
        self.channel = channel
        self.remote = remote
        self.local = local
        if kind == .udp {
            key = "udp|\(local?.port ?? 0)|\(remote.ipAddress ?? "?"):\(remote.port ?? 0)"
        } else {
            let n = flowCounter.wrappingAdd(1, ordering: .relaxed).newValue
            key = "\(kind.rawValue)#\(n)"
        }
    }

    /// True while the connection (or the UDP listener) is open.
    var isLive: Bool { channel.isActive }

    var localHost: String { local?.ipAddress ?? "127.0.0.1" }
    var localPort: Int { local?.port ?? 0 }
    var remoteHost: String { remote.ipAddress ?? "" }
    var remotePort: Int { remote.port ?? 0 }

    /// Fire-and-forget write of wire bytes.
    func send(_ bytes: [UInt8]) {
        let buffer = ByteBuffer(bytes: bytes)
        if kind == .udp {
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: buffer), promise: nil)
        } else {
            channel.writeAndFlush(buffer, promise: nil)
        }
    }

    func close() {
        channel.close(promise: nil)
    }

    var description: String { "\(kind.rawValue):\(remoteHost):\(remotePort)" }
}

/// What the network layer hands to the server actor, in arrival order.
enum InboundEvent: Sendable {
    case message(SIPMessage, ServerFlow)
    case datagram(SIPMessage?, ServerFlow)
    case opened(ServerFlow)
    case closed(ServerFlow)
}

/// Frames SIP messages with NSESIP's decoder and answers RFC 5626 CRLFCRLF pings (between messages) with a CRLF pong.
struct KeepAliveAwareDecoder: ByteToMessageDecoder {
    typealias InboundOut = SIPMessage

    private var inner: SIPMessageDecoder
    private var atBoundary = true

    init(limits: SIPParserLimits) {
        inner = SIPMessageDecoder(limits: limits)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if atBoundary {
            var pings = 0
            while let bytes = buffer.getBytes(at: buffer.readerIndex, length: 4), bytes == [0x0D, 0x0A, 0x0D, 0x0A] {
                buffer.moveReaderIndex(forwardBy: 4)
                pings += 1
            }
            if pings > 0 {
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: [0x0D, 0x0A])), promise: nil)
            }
        }
        guard let message = try inner.decodeMessage(&buffer) else {
            // Some bytes of a message are buffered: CRLFs from here on may be body bytes, not pings.
            atBoundary = buffer.readableBytes == 0
            return .needMoreData
        }
        atBoundary = true
        context.fireChannelRead(NIOAny(message))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// Delivers decoded TCP/TLS messages with their flow.
final class StreamServerHandler: ChannelInboundHandler {
    typealias InboundIn = SIPMessage

    let kind: SIPTransportKind
    let sink: AsyncStream<InboundEvent>.Continuation
    let logger: Logger
    private var flow: ServerFlow?

    init(kind: SIPTransportKind, sink: AsyncStream<InboundEvent>.Continuation, logger: Logger) {
        self.kind = kind
        self.sink = sink
        self.logger = logger
    }

    private func currentFlow(_ context: ChannelHandlerContext) -> ServerFlow? {
        if let flow { return flow }
        guard let remote = context.channel.remoteAddress else { return nil }
        let made = ServerFlow(kind: kind, channel: context.channel, remote: remote, local: context.channel.localAddress)
        flow = made
        sink.yield(.opened(made))
        return made
    }

    func channelActive(context: ChannelHandlerContext) {
        _ = currentFlow(context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { _ = currentFlow(context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let flow = currentFlow(context) else { return }
        sink.yield(.message(unwrapInboundIn(data), flow))
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let flow { sink.yield(.closed(flow)) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("sip server stream error, closing connection", metadata: ["sip.error": "\(error)"])
        context.close(promise: nil)
    }
}

/// Parses each UDP datagram as one message (nil when malformed); CRLF keep-alives are ignored.
final class DatagramServerHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let sink: AsyncStream<InboundEvent>.Continuation
    let limits: SIPParserLimits
    let logger: Logger

    init(sink: AsyncStream<InboundEvent>.Continuation, limits: SIPParserLimits, logger: Logger) {
        self.sink = sink
        self.limits = limits
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let bytes = Array(envelope.data.readableBytesView)
        if bytes.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { return }
        let flow = ServerFlow(kind: .udp, channel: context.channel, remote: envelope.remoteAddress,
                              local: context.channel.localAddress)
        do {
            sink.yield(.datagram(try SIPParser.parseDatagram(bytes, limits: limits), flow))
        } catch {
            logger.debug("sip server dropping malformed datagram", metadata: ["sip.error": "\(error)", "sip.size": "\(bytes.count)"])
            sink.yield(.datagram(nil, flow))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("sip server datagram socket error", metadata: ["sip.error": "\(error)"])
    }
}

/// Binds the configured listeners.
enum ListenerFactory {
    static func makeTLSContext(_ files: SIPServerConfiguration.TLSFiles) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(files.certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        guard !chain.isEmpty else { throw SIPServerError("no certificate in \(files.certificatePath)") }
        let key = try NIOSSLPrivateKey(file: files.keyPath, format: .pem)
        let config = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        return try NIOSSLContext(configuration: config)
    }

    static func bind(_ listener: SIPServerConfiguration.Listener, group: any EventLoopGroup, tls: NIOSSLContext?,
                     limits: SIPParserLimits, sink: AsyncStream<InboundEvent>.Continuation, logger: Logger) async throws -> any Channel {
        switch listener.transport {
        case .udp:
            return try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DatagramServerHandler(sink: sink, limits: limits, logger: logger))
                    }
                }
                .bind(host: listener.host, port: listener.port).get()
        case .tcp, .tls:
            let kind = listener.transport
            if kind == .tls, tls == nil { throw SIPServerError("a tls listener needs certificate and key files") }
            let context = kind == .tls ? tls : nil
            return try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let ops = channel.pipeline.syncOperations
                        if let context { try ops.addHandler(NIOSSLServerHandler(context: context)) }
                        try ops.addHandler(ByteToMessageHandler(KeepAliveAwareDecoder(limits: limits)))
                        try ops.addHandler(StreamServerHandler(kind: kind, sink: sink, logger: logger))
                    }
                }
                .bind(host: listener.host, port: listener.port).get()
        }
    }
}
