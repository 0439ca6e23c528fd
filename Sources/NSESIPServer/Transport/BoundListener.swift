import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NSESIP
import NSESystem

/// Logs a listener socket's errors and keeps them from ending its `NIOAsyncChannel` (whose inbound stream finishes
/// on the first error): an ICMP error after a datagram, or a failed accept, must not stop the listener.
final class ListenerErrorLogger: ChannelInboundHandler, Sendable {
    typealias InboundIn = Any

    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("sip server listener socket error", metadata: ["sip.error": "\(error)"])
    }
}

/// One bound listener, served by `serve` inside `executeThenClose`.
enum BoundListener: Sendable {
    typealias Connection = NIOAsyncChannel<SIPMessage, ByteBuffer>
    typealias Datagrams = NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>

    /// A UDP socket.
    case datagram(Datagrams)
    /// A TCP or TLS listening socket and its accepted connections.
    case stream(SIPTransportKind, NIOAsyncChannel<Connection, Never>)

    var channel: any Channel {
        switch self {
        case .datagram(let datagrams): return datagrams.channel
        case .stream(_, let server): return server.channel
        }
    }

    /// The UDP flow to `remote` through this listener (nil for a stream listener).
    func udpFlow(to remote: SocketAddress) -> ServerFlow? {
        guard case .datagram(let datagrams) = self else { return nil }
        return ServerFlow(kind: .udp, channel: datagrams.channel, remote: remote)
    }

    static func makeTLSContext(_ files: SIPServerConfiguration.TLSFiles) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(files.certificatePath).map {
            NIOSSLCertificateSource.certificate($0)
        }
        guard !chain.isEmpty else { throw SIPServerError("no certificate in \(files.certificatePath)") }
        let key = try NIOSSLPrivateKey(file: files.keyPath, format: .pem)
        let config = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        return try NIOSSLContext(configuration: config)
    }

    /// Binds one configured listener; a socket that cannot be bound is a `SIPServerError` naming its address.
    static func bind(
        _ listener: SIPServerConfiguration.Listener, group: any EventLoopGroup, tls: NIOSSLContext?,
        limits: SIPParserLimits, logger: Logger
    ) async throws -> BoundListener {
        if listener.transport == .tls, tls == nil {
            throw SIPServerError("a tls listener needs certificate and key files")
        }
        do {
            return try await bindSocket(listener, group: group, tls: tls, limits: limits, logger: logger)
        } catch {
            throw SIPServerError(NetworkFailure.describe(.listen, "\(listener)", error))
        }
    }

    /// Closes a listener that was never served: through `executeThenClose`, as NIO asks of every channel an
    /// `NIOAsyncChannel` wraps (one dropped unfinished stops the process).
    func discard() async {
        switch self {
        case .datagram(let datagrams): try? await datagrams.executeThenClose { _, _ in }
        case .stream(_, let server): try? await server.executeThenClose { _ in }
        }
    }

    private static func bindSocket(
        _ listener: SIPServerConfiguration.Listener, group: any EventLoopGroup, tls: NIOSSLContext?,
        limits: SIPParserLimits, logger: Logger
    ) async throws -> BoundListener {
        switch listener.transport {
        case .udp:
            let datagrams = try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: listener.host, port: listener.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ListenerErrorLogger(logger: logger))
                        return try Datagrams(wrappingChannelSynchronously: channel)
                    }
                }
            return .datagram(datagrams)
        case .tcp, .tls:
            let kind = listener.transport
            let context = kind == .tls ? tls : nil
            let server = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ListenerErrorLogger(logger: logger))
                    }
                }
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .bind(host: listener.host, port: listener.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let ops = channel.pipeline.syncOperations
                        if let context { try ops.addHandler(NIOSSLServerHandler(context: context)) }
                        try ops.addHandler(ByteToMessageHandler(KeepAliveAwareDecoder(limits: limits)))
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
            return .stream(kind, server)
        }
    }

    /// Serves the listener until it closes or the task is cancelled, handing everything received to `sink`; the
    /// listener and every connection it accepted are closed when this returns.
    func serve(sink: AsyncStream<InboundEvent>.Continuation, limits: SIPParserLimits, logger: Logger) async {
        do {
            switch self {
            case .datagram(let datagrams):
                try await BoundListener.serve(datagrams, sink: sink, limits: limits, logger: logger)
            case .stream(let kind, let server):
                try await server.executeThenClose { connections in
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await connection in connections {
                            group.addTask {
                                await BoundListener.serve(connection, kind: kind, sink: sink, logger: logger)
                            }
                        }
                    }
                }
            }
        } catch is CancellationError {
            return
        } catch {
            logger.debug("sip server listener stopped", metadata: ["sip.error": "\(error)"])
        }
    }

    /// Parses each datagram as one message (nil when malformed; CRLF keep-alives are ignored).
    private static func serve(
        _ datagrams: Datagrams, sink: AsyncStream<InboundEvent>.Continuation,
        limits: SIPParserLimits, logger: Logger
    ) async throws {
        let channel = datagrams.channel
        try await datagrams.executeThenClose { inbound, _ in
            for try await envelope in inbound {
                let bytes = Array(envelope.data.readableBytesView)
                if bytes.allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { continue }
                let flow = ServerFlow(kind: .udp, channel: channel, remote: envelope.remoteAddress)
                do {
                    sink.yield(.datagram(try SIPParser.parseDatagram(bytes, limits: limits), flow))
                } catch {
                    // Still handed on: it counts for the fault plan's packet drops.
                    logger.debug(
                        "sip server dropping malformed datagram",
                        metadata: [
                            "sip.error": "\(error)", "sip.size": "\(bytes.count)",
                        ])
                    sink.yield(.datagram(nil, flow))
                }
            }
        }
    }

    /// Delivers one TCP/TLS connection's messages with its flow until either side closes it; a framing or TLS
    /// error closes it.
    private static func serve(
        _ connection: Connection, kind: SIPTransportKind, sink: AsyncStream<InboundEvent>.Continuation,
        logger: Logger
    ) async {
        guard let remote = connection.channel.remoteAddress else {
            try? await connection.executeThenClose { _, _ in }
            return
        }
        let flow = ServerFlow(kind: kind, channel: connection.channel, remote: remote)
        sink.yield(.opened(flow))
        do {
            try await connection.executeThenClose { inbound, _ in
                for try await message in inbound { sink.yield(.message(message, flow)) }
            }
        } catch is CancellationError {
        } catch {
            logger.debug("sip server stream error, closing connection", metadata: ["sip.error": "\(error)"])
        }
        sink.yield(.closed(flow))
    }
}
