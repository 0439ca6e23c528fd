public import Logging
public import NIOCore
import NIOPosix
import NIOSSL
import NSESystem

/// A client connection (UDP socket, TCP or TLS stream) carrying SIP messages to one remote endpoint: its addresses
/// and its sending half. The receiving half is the `Inbound` sequence that `withConnection` hands to its body.
///
/// The channel is a `NIOAsyncChannel<SIPMessage, ByteBuffer>`, served inside `executeThenClose` for as long as the
/// body of `withConnection` runs: messages are decoded on the event loop (`SIPStreamClientDecoder`,
/// `SIPDatagramClientHandler`) and handed to `Inbound`, and the channel is closed when the body returns. A
/// `SIPTransport` kept beyond that only fails its sends.
///
/// Sends are written on the channel without waiting, as the server's `ServerFlow` writes them (they pass the
/// `NIOAsyncChannel`'s handler in order, as its outbound writer's would): a transaction sends from its actor and
/// goes on, with no task per message and no wait for the write (a connection that fails ends `Inbound` with why).
/// The outbound writer would add its own state machine and an `async` hop per message for back-pressure that SIP's
/// few small messages never need.
public final class SIPTransport: Sendable {
    /// The channel's own type: SIP messages in, wire bytes out, for every transport.
    typealias Connection = NIOAsyncChannel<SIPMessage, ByteBuffer>

    /// The transport protocol.
    public let kind: SIPTransportKind
    /// The local socket address (for Via sent-by and Contact).
    public let localAddress: SocketAddress
    /// The remote socket address.
    public let remoteAddress: SocketAddress
    /// The size limits applied to received and sent messages.
    public let limits: SIPParserLimits
    private let channel: any Channel
    /// Where what is sent is recorded, when a trace was asked for.
    private let tap: SIPTrace.Tap?

    private init(
        kind: SIPTransportKind, channel: any Channel, addresses: SIPConnectionAddresses.Pair, limits: SIPParserLimits,
        tap: SIPTrace.Tap?
    ) {
        self.kind = kind
        self.channel = channel
        self.localAddress = addresses.local
        self.remoteAddress = addresses.remote
        self.limits = limits
        self.tap = tap
    }

    /// The event loop the connection is served on (its timers can run there).
    public var eventLoop: any EventLoop { channel.eventLoop }

    /// The local IP address as text (IPv6 without brackets).
    public var localHost: String { localAddress.ipAddress ?? "127.0.0.1" }
    /// The local port.
    public var localPort: Int { localAddress.port ?? 0 }

    /// Connects to an endpoint on the given event loop group and runs `body` with the connection: the transport
    /// (addresses, sends) and the messages it receives. The channel is closed when `body` returns; `Inbound` ends
    /// (or throws the `SIPError` that ended it) when the connection closes or fails before that.
    ///
    /// Throws a `SIPError` only when the connection cannot be opened; `body` itself does not throw: what it does
    /// with the connection's end is its own business. With a `trace`, every message sent and received and the
    /// peer's close are recorded in it.
    public static func withConnection<Result: Sendable>(
        to endpoint: SIPEndpoint, tls: SIPTLSOptions = SIPTLSOptions(),
        limits: SIPParserLimits = .default, group: any EventLoopGroup,
        connectTimeout: Duration = .seconds(5), trace: SIPTrace? = nil, logger: Logger,
        _ body: (SIPTransport, Inbound) async -> Result
    ) async throws(SIPError) -> Result {
        let (connection, addresses) = try await connect(
            to: endpoint, tls: tls, limits: limits, group: group, connectTimeout: connectTimeout, logger: logger)
        do {
            return try await connection.executeThenClose { inbound, _ in
                // Recorded when the connect completed: the channel itself may have forgotten them by now, if the
                // peer has already closed it (Inbound then ends with why).
                guard let pair = addresses.pair else {
                    throw SIPError(.transport, "connected socket has no address")
                }
                let tap = trace.map { SIPTrace.Tap($0, kind: endpoint.transport) }
                let transport = SIPTransport(
                    kind: endpoint.transport, channel: connection.channel, addresses: pair, limits: limits, tap: tap)
                logger.debug(
                    "sip transport connected",
                    metadata: [
                        "sip.transport": "\(endpoint.transport.rawValue)",
                        "sip.local": "\(transport.localAddress)",
                        "sip.remote": "\(transport.remoteAddress)",
                    ])
                return await body(transport, Inbound(inbound, kind: endpoint.transport, tap: tap, logger: logger))
            }
        } catch let error as SIPError {
            throw error
        } catch {
            // executeThenClose only rethrows what its body throws, and that is a SIPError.
            throw SIPError(.transport, "connection failed: \(NetworkFailure.reason(error))")
        }
    }

    /// Sends one message; for UDP one datagram, for streams the wire bytes.
    public func send(_ message: SIPMessage) throws(SIPError) {
        try send(bytes: message.serialized())
    }

    /// Sends pre-serialized wire bytes: hands them to the channel and returns, without waiting for the write. Throws
    /// when they are over the size limit, or when the connection is closed (by either side, or because its
    /// `withConnection` scope ended).
    public func send(bytes: [UInt8]) throws(SIPError) {
        guard bytes.count <= limits.maxMessageSize else {
            throw SIPError(
                .messageTooLarge,
                "outgoing message of \(bytes.count) bytes exceeds the \(limits.maxMessageSize)-byte limit")
        }
        guard channel.isActive else { throw SIPError(.closed, "\(kind.rawValue) connection is closed") }
        tap?.trace.sent(bytes)
        channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// True while the underlying channel is open.
    public var isActive: Bool { channel.isActive }

    /// Closes the connection and waits until it is closed; `Inbound` ends.
    public func close() async {
        tap?.closing()
        try? await channel.close().get()
    }

    // MARK: - Connecting

    /// Opens the channel: an IP literal is connected to directly, a name through the resolver; TLS with SNI (a
    /// name only) and an optional pinned certificate.
    private static func connect(
        to endpoint: SIPEndpoint, tls: SIPTLSOptions, limits: SIPParserLimits, group: any EventLoopGroup,
        connectTimeout: Duration, logger: Logger
    ) async throws(SIPError) -> (Connection, SIPConnectionAddresses) {
        // An IP literal is connected to directly: no resolver, no Happy Eyeballs timers (a proxy like
        // sip:127.0.0.1:5060 is the common case, and the extension has a budget).
        let literal =
            isIPLiteral(endpoint.host) ? try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) : nil
        do {
            switch endpoint.transport {
            case .udp:
                let bootstrap = DatagramBootstrap(group: group)
                let initializer: @Sendable (any Channel) -> EventLoopFuture<(Connection, SIPConnectionAddresses)> = {
                    channel in
                    channel.eventLoop.makeCompletedFuture {
                        let addresses = SIPConnectionAddresses()
                        try channel.pipeline.syncOperations.addHandlers(
                            addresses, SIPDatagramClientHandler(limits: limits, logger: logger))
                        return (try Connection(wrappingChannelSynchronously: channel), addresses)
                    }
                }
                if let literal { return try await bootstrap.connect(to: literal, channelInitializer: initializer) }
                return try await bootstrap.connect(
                    host: endpoint.host, port: endpoint.port, channelInitializer: initializer)
            case .tcp, .tls:
                var context: NIOSSLContext? = nil
                var pinned: NIOSSLCertificate? = nil
                var serverName: String? = nil
                if endpoint.transport == .tls {
                    (context, pinned) = try makeTLSContext(tls)
                    let name = tls.serverName ?? endpoint.host
                    if !isIPLiteral(name) { serverName = name }
                }
                let initializer: @Sendable (any Channel) -> EventLoopFuture<(Connection, SIPConnectionAddresses)> = {
                    [context, pinned, serverName] channel in
                    channel.eventLoop.makeCompletedFuture {
                        let ops = channel.pipeline.syncOperations
                        let addresses = SIPConnectionAddresses()
                        try ops.addHandler(addresses)
                        if let context {
                            let handler: NIOSSLClientHandler
                            if let pinned {
                                handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) {
                                    chain, promise in
                                    promise.succeed(chain.contains(pinned) ? .certificateVerified : .failed)
                                }
                            } else {
                                handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                            }
                            try ops.addHandler(handler)
                        }
                        // Errors are the connection's `Inbound`'s to name and log: no handler of its own for them
                        // (each handler type costs the process its first-use conformance lookups, ~0.25 M
                        // instructions in a debug build).
                        try ops.addHandler(ByteToMessageHandler(SIPStreamClientDecoder(limits: limits)))
                        return (try Connection(wrappingChannelSynchronously: channel), addresses)
                    }
                }
                let timeoutMs = Int64(
                    connectTimeout.components.seconds * 1000 + connectTimeout.components.attoseconds
                        / 1_000_000_000_000_000)
                let bootstrap = ClientBootstrap(group: group)
                    .connectTimeout(.milliseconds(timeoutMs))
                    .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                if let literal { return try await bootstrap.connect(to: literal, channelInitializer: initializer) }
                return try await bootstrap.connect(
                    host: endpoint.host, port: endpoint.port, channelInitializer: initializer)
            }
        } catch let error as SIPError {
            throw error
        } catch {
            throw SIPError(.transport, NetworkFailure.describe(.connect, "\(endpoint)", error))
        }
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
