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

/// One bound listener: a UDP socket served by `serve` inside `executeThenClose`, or a TCP/TLS listening socket
/// whose connections hand their messages on from their own pipelines (`SIPAcceptedStreamHandler`).
enum BoundListener: Sendable {
    typealias Datagrams = NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>

    /// A UDP socket.
    case datagram(Datagrams)
    /// A TCP or TLS listening socket and its accepted connections still open.
    case stream(any Channel, SIPAcceptedConnections)

    var channel: any Channel {
        switch self {
        case .datagram(let datagrams): return datagrams.channel
        case .stream(let server, _): return server
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

    /// Binds one configured listener; a socket that cannot be bound is a `SIPServerError` naming its address. A
    /// stream listener's connections hand what they receive to `sink` from the moment they are accepted.
    static func bind(
        _ listener: SIPServerConfiguration.Listener, group: any EventLoopGroup, tls: NIOSSLContext?,
        limits: SIPParserLimits, sink: AsyncStream<InboundEvent>.Continuation, logger: Logger
    ) async throws -> BoundListener {
        if listener.transport == .tls, tls == nil {
            throw SIPServerError("a tls listener needs certificate and key files")
        }
        do {
            return try await bindSocket(listener, group: group, tls: tls, limits: limits, sink: sink, logger: logger)
        } catch {
            throw SIPServerError(NetworkFailure.describe(.listen, "\(listener)", error))
        }
    }

    /// Closes a listener that was never served: through `executeThenClose`, as NIO asks of every channel an
    /// `NIOAsyncChannel` wraps (one dropped unfinished stops the process).
    func discard() async {
        switch self {
        case .datagram(let datagrams): try? await datagrams.executeThenClose { _, _ in }
        case .stream(let server, let connections):
            try? await server.close()
            connections.closeAll()
        }
    }

    /// Closes the listening socket and every connection it accepted (a stream listener's connections are closed
    /// here; a UDP listener's `serve` returns).
    func close() {
        channel.close(promise: nil)
        if case .stream(_, let connections) = self { connections.closeAll() }
    }

    private static func bindSocket(
        _ listener: SIPServerConfiguration.Listener, group: any EventLoopGroup, tls: NIOSSLContext?,
        limits: SIPParserLimits, sink: AsyncStream<InboundEvent>.Continuation, logger: Logger
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
            let connections = SIPAcceptedConnections()
            let server = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ListenerErrorLogger(logger: logger))
                    }
                }
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let ops = channel.pipeline.syncOperations
                        if let context { try ops.addHandler(NIOSSLServerHandler(context: context)) }
                        try ops.addHandler(ByteToMessageHandler(KeepAliveAwareDecoder(limits: limits)))
                        try ops.addHandler(
                            SIPAcceptedStreamHandler(
                                connections: connections,
                                makeFlow: { ServerFlow(kind: kind, channel: $0, remote: $1) },
                                deliver: { sink.yield(.message($0, $1)) },
                                failed: { error in
                                    logger.debug(
                                        "sip server stream error, closing connection",
                                        metadata: ["sip.error": "\(error)"])
                                }))
                    }
                }
                .bind(host: listener.host, port: listener.port).get()
            return .stream(server, connections)
        }
    }

    /// Serves the listener until it closes or the task is cancelled (a UDP listener hands each datagram to `sink`);
    /// the listener and every connection it accepted are closed when this returns.
    func serve(sink: AsyncStream<InboundEvent>.Continuation, limits: SIPParserLimits, logger: Logger) async {
        do {
            switch self {
            case .datagram(let datagrams):
                try await BoundListener.serve(datagrams, sink: sink, limits: limits, logger: logger)
            case .stream(let server, let connections):
                // Connections serve themselves: this only waits for the listener to close.
                await withTaskCancellationHandler {
                    try? await server.closeFuture.get()
                } onCancel: {
                    server.close(promise: nil)
                }
                connections.closeAll()
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
}
