import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NSEAPNsServer
import Synchronization

/// Sends pushes on to the other nodes: HTTP/2 with prior knowledge (h2c, which every node's listener speaks), one
/// connection per node kept open and a stream per push. Its own small client rather than AsyncHTTPClient, which
/// speaks HTTP/2 only over TLS and retries inside its pool: a forward must know whether its request left this node
/// (a connection that could not be made is tried again or elsewhere; a stream that went out is never sent twice).
final class FleetForwarder: Sendable {
    /// How long a forwarded request may take to be answered: a push's once its row is stored, a `/v1/notify` once
    /// the extension ran (its budget is at most 30 s by default).
    static let answerTimeout: TimeAmount = .seconds(60)

    private let group: any EventLoopGroup
    private let secret: String
    private let node: String
    /// Open (or opening) connections by `host:port`; a closed one is dropped and the next push opens another.
    private let connections = Mutex<[String: EventLoopFuture<Connection>]>([:])

    init(secret: String, node: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.secret = secret
        self.node = node
        self.group = group
    }

    func send(_ push: ForwardedPush, to peer: FleetPeer) async -> ForwardOutcome {
        let connection: Connection
        do { connection = try await self.connection(to: peer.address).get() } catch {
            return .unreachable("\(error)")
        }
        var headers = HPACKHeaders([
            (":method", push.method), (":scheme", "http"), (":authority", peer.address), (":path", push.path),
        ])
        for (name, value) in push.headers where !name.hasPrefix(":") && name != "host" && name != "content-length" {
            headers.add(name: name, value: value)
        }
        headers.add(name: "content-length", value: String(push.body.count))
        headers.add(name: FleetHeaders.forwarded, value: secret)
        headers.add(name: FleetHeaders.node, value: node)
        if let team = push.identity.teamID { headers.add(name: FleetHeaders.team, value: team) }
        if let bundle = push.identity.certificateBundleID { headers.add(name: FleetHeaders.bundle, value: bundle) }
        let body = push.body
        let eventLoop = group.next()
        let answer = eventLoop.makePromise(of: ForwardOutcome.self)
        let goAway = connection.goAway
        let stream = connection.multiplexer.createStreamChannel { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ForwardedAnswer(answer, goAway: goAway))
            }
        }
        do {
            let channel = try await stream.get()
            channel.write(
                HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: body.isEmpty)), promise: nil)
            if !body.isEmpty {
                channel.write(
                    HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(bytes: body)), endStream: true)),
                    promise: nil)
            }
            channel.flush()
            let timeout = channel.eventLoop.scheduleTask(in: Self.answerTimeout) {
                answer.succeed(.lost("no answer within \(Self.answerTimeout.nanoseconds / 1_000_000_000) s"))
                channel.close(promise: nil)
            }
            let outcome = try await answer.futureResult.get()
            timeout.cancel()
            return outcome
        } catch {
            // No stream could be opened: the connection had closed, the push never left.
            answer.succeed(.unreachable("\(error)"))
            return .unreachable("\(error)")
        }
    }

    /// Closes every connection (the node stops).
    func close() {
        let open = connections.withLock { connections in
            defer { connections = [:] }
            return Array(connections.values)
        }
        for future in open { future.whenSuccess { $0.channel.close(promise: nil) } }
    }

    private func connection(to address: String) -> EventLoopFuture<Connection> {
        connections.withLock { connections in
            if let open = connections[address] { return open }
            let goAway = GoAwayWatch()
            let opening = Self.connect(address, group: group, goAway: goAway)
            connections[address] = opening
            // A connection that fails, closes or is told to go away is forgotten: the next push opens another.
            goAway.onGoAway = { [self] in forget(address, opening) }
            opening.whenComplete { [self] result in
                switch result {
                case .failure: forget(address, opening)
                case .success(let connection):
                    connection.channel.closeFuture.whenComplete { _ in self.forget(address, opening) }
                }
            }
            return opening
        }
    }

    private func forget(_ address: String, _ future: EventLoopFuture<Connection>) {
        connections.withLock { connections in
            if connections[address] === future { connections[address] = nil }
        }
    }

    private static func connect(_ address: String, group: any EventLoopGroup, goAway: GoAwayWatch)
        -> EventLoopFuture<Connection>
    {
        let eventLoop = group.next()
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else {
            return eventLoop.makeFailedFuture(ForwardError("not host:port: \(address)"))
        }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return ClientBootstrap(group: eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(2))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in
                        // Servers open no streams here.
                        stream.close()
                    }
                    try channel.pipeline.syncOperations.addHandler(GoAwayObserver(goAway))
                }
            }
            .connect(host: host, port: port)
            .flatMapThrowing { channel in
                Connection(
                    channel: channel,
                    multiplexer: try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self)
                        .syncMultiplexer(),
                    goAway: goAway)
            }
    }
}

/// One open connection to a node.
struct Connection: Sendable {
    let channel: any Channel
    let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    let goAway: GoAwayWatch
}

/// The last stream a connection's server said it took (its GOAWAY), once it said so.
final class GoAwayWatch: Sendable {
    private let last = Mutex<Int32?>(nil)
    private let action = Mutex<(@Sendable () -> Void)?>(nil)

    /// Told once the server sends GOAWAY.
    var onGoAway: (@Sendable () -> Void)? {
        get { action.withLock { $0 } }
        set { action.withLock { $0 = newValue } }
    }

    func received(lastStreamID: HTTP2StreamID) {
        last.withLock { $0 = min($0 ?? .max, Int32(lastStreamID)) }
        onGoAway?()
    }

    /// Whether `stream` is above the last stream a GOAWAY said was taken.
    func refused(_ stream: HTTP2StreamID) -> Bool {
        last.withLock { last in last.map { Int32(stream) > $0 } ?? false }
    }
}

/// Sees the connection's GOAWAY frames (root-stream frames pass the multiplexer on to here).
private final class GoAwayObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let watch: GoAwayWatch

    init(_ watch: GoAwayWatch) {
        self.watch = watch
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway(let lastStreamID, _, _) = unwrapInboundIn(data).payload {
            watch.received(lastStreamID: lastStreamID)
        }
        context.fireChannelRead(data)
    }
}

/// Why a forward could not start.
struct ForwardError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads one forwarded push's answer on its stream: the headers, then the body to its end.
private final class ForwardedAnswer: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload

    private let promise: EventLoopPromise<ForwardOutcome>
    private let goAway: GoAwayWatch
    private var status: Int?
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    init(_ promise: EventLoopPromise<ForwardOutcome>, goAway: GoAwayWatch) {
        self.promise = promise
        self.goAway = goAway
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if status == nil {
                for header in frame.headers {
                    if header.name == ":status" {
                        status = Int(header.value)
                    } else {
                        headers.append((header.name, header.value))
                    }
                }
            }
            if frame.endStream { finish(context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data { body += buffer.readableBytesView }
            if frame.endStream { finish(context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.succeed(.lost("the stream closed before its answer"))
        context.fireChannelInactive()
    }

    /// A stream the server refused, or closed by its GOAWAY above the last stream it took, was never processed
    /// (RFC 9113 §6.8, §8.7): the push may go again. Any other end leaves its fate unknown.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed,
            closed.errorCode == .refusedStream || goAway.refused(closed.streamID)
        {
            promise.succeed(.unreachable("not taken by the node: \(closed.errorCode)"))
        } else {
            promise.succeed(.lost("\(error)"))
        }
        context.close(promise: nil)
    }

    /// The answer is whole. The stream is not closed here: both ends sent END_STREAM, so NIOHTTP2 closes it; a
    /// close now, before its closing event, would send RST_STREAM, and a server counts resets (NIOHTTP2's rapid-reset
    /// guard answers 200 of them in 30 s with GOAWAY, taking every stream in flight down with the connection).
    private func finish(_ context: ChannelHandlerContext) {
        guard let status else { return promise.succeed(.lost("an answer without :status")) }
        promise.succeed(.answered(status: status, headers: headers, body: body))
    }
}
