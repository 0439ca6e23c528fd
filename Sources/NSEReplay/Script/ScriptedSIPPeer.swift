import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NSESIP

/// A loopback SIP peer that plays a recorded exchange (`sip.script`) back to the extension under replay, in place of
/// the server it was recorded against (Kamailio, Flexisip, `nse sip-server`): the same answers, requests and closes,
/// in the same order and at the same offsets (`SIPScriptPlayer` decides what and when). It checks no credentials:
/// the recorded password was never kept. What the extension answers differently goes into the case's log
/// (``stop()``), not into its verdict.
actor ScriptedSIPPeer {
    /// A path back to the extension: a TCP or TLS connection, or the UDP socket and the address a datagram came from.
    struct Flow: Sendable {
        let channel: any Channel
        /// UDP: where to send.
        let remote: SocketAddress?

        func send(_ message: SIPMessage) {
            let buffer = ByteBuffer(bytes: message.serialized())
            if let remote {
                channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: buffer), promise: nil)
            } else {
                channel.writeAndFlush(buffer, promise: nil)
            }
        }

        /// A stream closed; the UDP socket itself closed (the extension's next datagram is refused, as recorded).
        func close() {
            channel.close(promise: nil)
        }
    }

    /// The certificate and key of a TLS listener (the case's self-signed ones).
    struct TLSFiles: Sendable {
        var certificate: String
        var key: String
    }

    private enum State {
        case idle
        /// Its socket, and the task that serves it (and the connections it accepts).
        case listening(any Channel, serving: Task<Void, Never>)
        case stopped
    }

    /// A message a connection received, when and from where.
    private struct Received: Sendable {
        var message: SIPMessage
        var flow: Flow
        var address: SocketAddress
        var at = ContinuousClock.now
    }

    /// Something to do at its due time, in the order it was decided.
    private struct Pending {
        var output: SIPScriptPlayer.Output
        var origin: Flow
        var order: Int
    }

    private let script: SIPScript
    private let logger: Logger
    private var state = State.idle
    private var player: SIPScriptPlayer?
    private var pending: [Pending] = []
    private var order = 0
    /// The recorded events played so far.
    private var performed = 0
    private var alarm: Task<Void, Never>?
    /// The connection (or, over UDP, the address) the extension used last.
    private var latest: Flow?

    init(script: SIPScript, logger: Logger) {
        self.script = script
        self.logger = logger
    }

    /// Listens on an ephemeral loopback port over the script's transport; returns the proxy URI to reach it.
    func start(tls: TLSFiles?) async throws -> SIPURI {
        guard case .idle = state else { throw SIPError(.invalidArgument, "the scripted peer was started already") }
        let group = MultiThreadedEventLoopGroup.singleton
        // The serving task holds the peer until `stop()` ends it.
        let peer = self
        let channel: any Channel
        let serving: Task<Void, Never>
        switch script.transport {
        case .udp:
            let datagrams = try await DatagramBootstrap(group: group).bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SocketErrors())
                    return try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(
                        wrappingChannelSynchronously: channel)
                }
            }
            channel = datagrams.channel
            serving = Task {
                try? await datagrams.executeThenClose { inbound, _ in
                    for try await envelope in inbound {
                        let now = ContinuousClock.now
                        guard let message = try? SIPParser.parseDatagram(Array(envelope.data.readableBytesView)) else {
                            continue
                        }
                        let flow = Flow(channel: datagrams.channel, remote: envelope.remoteAddress)
                        await peer.handle(message, from: flow, address: envelope.remoteAddress, at: now)
                    }
                }
            }
        case .tcp, .tls:
            let context = try tls.map(Self.context)
            // Each connection hands its messages, stamped as they arrive, to one stream the serving task plays in
            // order; the connections are closed with the listener.
            let (received, sink) = AsyncStream.makeStream(of: Received.self)
            let connections = SIPAcceptedConnections()
            let server = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let operations = channel.pipeline.syncOperations
                        if let context { try operations.addHandler(NIOSSLServerHandler(context: context)) }
                        try operations.addHandler(ByteToMessageHandler(SIPMessageDecoder()))
                        try operations.addHandler(
                            SIPAcceptedStreamHandler(
                                connections: connections,
                                makeFlow: { channel, remote in (Flow(channel: channel, remote: nil), remote) },
                                deliver: { message, flow in
                                    sink.yield(Received(message: message, flow: flow.0, address: flow.1))
                                },
                                failed: { _ in }))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            channel = server
            serving = Task {
                await withTaskCancellationHandler {
                    for await item in received {
                        await peer.handle(item.message, from: item.flow, address: item.address, at: item.at)
                    }
                } onCancel: {
                    sink.finish()
                }
                server.close(promise: nil)
                connections.closeAll()
            }
        }
        state = .listening(channel, serving: serving)
        let port = channel.localAddress?.port ?? 0
        player = SIPScriptPlayer(
            script: script, local: SIPScriptPlayer.Local(transport: script.transport, host: "127.0.0.1", port: port))
        logger.debug(
            "sip peer listening",
            metadata: ["sip.transport": "\(script.transport.rawValue)", "sip.port": "\(port)"])
        return SIPURI(
            scheme: .sip, host: "127.0.0.1", port: port,
            parameters: script.transport == .udp ? [] : [SIPParameter("transport", script.transport.rawValue)])
    }

    /// Stops listening, closes every connection and drops what was still to come; returns what the case's log says
    /// about the playback.
    func stop() async -> [String] {
        guard case .listening(let channel, let serving) = state else { return [] }
        state = .stopped
        alarm?.cancel()
        alarm = nil
        let unplayed = pending.count
        pending = []
        serving.cancel()
        channel.close(promise: nil)
        await serving.value
        guard let player else { return [] }
        var summary = "sip peer: played \(performed) of the \(player.playableCount) recorded events it had to play"
        if unplayed > 0 { summary += " (\(unplayed) still to come when the case ended)" }
        return player.notes + [summary]
    }

    private func handle(
        _ message: SIPMessage, from flow: Flow, address: SocketAddress?, at: ContinuousClock.Instant
    ) {
        guard case .listening = state else { return }
        latest = flow
        let source = address.flatMap { address in
            address.ipAddress.map { SIPEndpoint(host: $0, port: address.port ?? 0, transport: script.transport) }
        }
        guard let outputs = player?.received(message, at: at, source: source) else { return }
        for output in outputs {
            pending.append(Pending(output: output, origin: flow, order: order))
            order += 1
        }
        pending.sort { ($0.output.due, $0.order) < ($1.output.due, $1.order) }
        fireDue()
    }

    /// Does what is due, in order, and sets the alarm for the next.
    private func fireDue() {
        let now = ContinuousClock.now
        while let first = pending.first, first.output.due <= now {
            pending.removeFirst()
            perform(first)
        }
        alarm?.cancel()
        alarm = nil
        guard let next = pending.first?.output.due else { return }
        alarm = Task { [weak self] in
            do { try await Task.sleep(until: next, clock: .continuous) } catch { return }
            await self?.fireDue()
        }
    }

    private func perform(_ item: Pending) {
        performed += 1
        var log = logger
        log[metadataKey: "sip.event"] = "\(item.output.event)"
        switch item.output.action {
        case .reply(let message):
            log.debug("sip peer answered", metadata: ["sip.status": "\(Self.status(message))"])
            item.origin.send(message)
        case .send(let message):
            log.debug("sip peer sent a recorded request", metadata: ["sip.method": "\(Self.method(message))"])
            (latest ?? item.origin).send(message)
        case .close:
            log.debug("sip peer closed the connection, as recorded")
            (latest ?? item.origin).close()
        }
    }

    private static func status(_ message: SIPMessage) -> Int {
        if case .response(let response) = message { response.statusCode } else { 0 }
    }

    private static func method(_ message: SIPMessage) -> String {
        if case .request(let request) = message { request.method } else { "-" }
    }

    private static func context(_ files: TLSFiles) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(files.certificate).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: files.key, format: .pem)
        return try NIOSSLContext(
            configuration: TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(key)))
    }

    /// Keeps a socket error (an ICMP error after a datagram, a failed accept) from ending the peer's socket.
    private final class SocketErrors: ChannelInboundHandler, Sendable {
        typealias InboundIn = Any

        func errorCaught(context: ChannelHandlerContext, error: any Error) {}
    }
}
