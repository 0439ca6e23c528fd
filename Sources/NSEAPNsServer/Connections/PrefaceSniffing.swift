import CoreMetrics
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// One cleartext listener for HTTP/1.1 and HTTP/2 with prior knowledge: the first bytes of a connection decide.
/// A connection that opens with the HTTP/2 client preface (`PRI * HTTP/2.0…`, RFC 9113 §3.4) gets the HTTP/2
/// pipeline (``HTTP2ConnectionChannel``), any other Hummingbird's HTTP/1.1 pipeline (unless the listener is HTTP/2
/// only: then it is closed); the bytes read while deciding are replayed into it.
///
/// Until it has decided, the connection belongs to ``PrefaceSniffer``, which frees it at once when the client
/// closes or half-closes, when the server stops, or when the preface (or, with TLS, the handshake and the first
/// request bytes) has not come within ``ConnectionTimeouts/preface``.
struct PrefaceSniffingChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(HTTP1Channel.Value)
        case http2(HTTP2ConnectionChannel.Value)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let http1: HTTP1Channel?
    let http2: HTTP2ConnectionChannel
    let timeouts: ConnectionTimeouts
    /// Where the connections open now are counted.
    let metrics: ServeMetrics
    /// The injected faults: `connect_delay` and `settings_delay` rules are taken here.
    let faults: APNsFaultPlan?

    /// - Parameters:
    ///   - http1Allowed: false for an HTTP/2-only listener.
    ///   - responseHandlers: extra handlers for every request/response pair (HTTP/1.1 connection or HTTP/2 stream).
    init(
        responder: @escaping HTTPChannelHandler.Responder, timeouts: ConnectionTimeouts, streams: StreamSettings,
        http1Allowed: Bool = true, metrics: ServeMetrics, faults: APNsFaultPlan? = nil,
        responseHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] }
    ) {
        self.timeouts = timeouts
        self.metrics = metrics
        self.faults = faults
        http1 =
            http1Allowed
            ? HTTP1Channel(
                responder: responder,
                configuration: HTTP1Channel.Configuration(
                    additionalChannelHandlers: responseHandlers(), idleTimeout: TimeAmount(timeouts.idle)))
            : nil
        var limits = HTTP2Limits()
        limits.idleTimeout = TimeAmount(timeouts.idle)
        limits.maxConcurrentStreams = streams.maxConcurrentStreams
        limits.throttleAfterRejection = streams.throttleAfterRejection
        http2 = HTTP2ConnectionChannel(responder: responder, limits: limits, streamHandlers: responseHandlers)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Counted from here, the first this listener sees of the connection, to its close, whatever ends it.
        let connections = metrics.connections
        connections.increment()
        channel.closeFuture.whenComplete { _ in connections.decrement() }
        let promise = channel.eventLoop.makePromise(of: Negotiated.self)
        // A `connect_delay` fault: nothing is read (no TLS handshake, no preface) until it is over; the preface
        // timeout counts from then.
        let connectDelay = faults?.takeConnectDelay().map { TimeAmount.milliseconds(Int64($0 * 1000)) }
        if let connectDelay {
            try? channel.syncOptions?.setOption(.autoRead, value: false)
            channel.eventLoop.scheduleTask(in: connectDelay) {
                channel.setOption(.autoRead, value: true).whenFailure { _ in }
            }
        }
        let faults = faults
        let configure = { (isHTTP2: Bool) -> EventLoopFuture<Negotiated> in
            if isHTTP2 { return http2.setup(channel: channel, logger: logger).map { .http2($0) } }
            guard let http1 else { return channel.eventLoop.makeFailedFuture(PrefaceSniffer.NotHTTP2()) }
            return http1.setup(channel: channel, logger: logger).map { .http1($0) }
        }
        let sniffer = PrefaceSniffer(
            promise: promise, timeout: TimeAmount(timeouts.preface) + (connectDelay ?? .zero),
            settingsDelay: { faults?.takeSettingsDelay().map { .milliseconds(Int64($0 * 1000)) } },
            configure: configure)
        do {
            try channel.pipeline.syncOperations.addHandler(sniffer)
        } catch {
            promise.fail(error)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return channel.eventLoop.makeSucceededFuture(Value(negotiated: promise.futureResult, channel: channel))
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1(let connection): await http1?.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("connection closed before its protocol was known", metadata: ["http.error": "\(error)"])
        }
    }
}

/// How long a connection may stay silent.
public struct ConnectionTimeouts: Sendable {
    /// From accept to a decided protocol (the HTTP/2 preface, or the first bytes of an HTTP/1.1 request; with TLS,
    /// the handshake included). Load-balancer probes and port scans that connect and never speak are freed after it.
    public var preface: Duration
    /// An HTTP/2 connection with no open stream, or an HTTP/1.1 connection between requests, is closed after it.
    public var idle: Duration

    public init(preface: Duration = .seconds(10), idle: Duration = .seconds(3600)) {
        self.preface = preface
        self.idle = idle
    }
}

/// What an HTTP/2 connection allows its client.
public struct StreamSettings: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS, advertised and enforced (1000 by default, as APNs).
    public var maxConcurrentStreams: Int

    /// What APNs advertises, as providers report it (Apple developer forums).
    public static let defaultMaxConcurrentStreams = 1000
    /// The values `--max-concurrent-streams` accepts.
    public static let maxConcurrentStreamsRange = 1...10_000
    /// `--throttle-after-rejection`: a 4xx or 5xx answer lowers the connection's limit to 1 until the next 200, or
    /// 5 s without another rejection, as providers report APNs does.
    public var throttleAfterRejection: Bool

    public init(maxConcurrentStreams: Int = defaultMaxConcurrentStreams, throttleAfterRejection: Bool = false) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.throttleAfterRejection = throttleAfterRejection
    }
}

/// The TLS listener: TLS (offering ALPN `h2` and `http/1.1`), then the same decision by the first decrypted bytes.
/// Deciding by bytes rather than by ALPN alone also serves clients that speak HTTP/2 over TLS without offering ALPN,
/// as APNs does (aioapns, older pushy): Hummingbird's ALPN channel would take them for HTTP/1.1 and close them.
struct TLSPrefaceSniffingChannel: ServerChildChannel {
    typealias Value = PrefaceSniffingChannel.Value

    let sslContext: NIOSSLContext
    let plaintext: PrefaceSniffingChannel

    init(
        sslContext: NIOSSLContext, responder: @escaping HTTPChannelHandler.Responder, timeouts: ConnectionTimeouts,
        streams: StreamSettings, metrics: ServeMetrics, faults: APNsFaultPlan? = nil,
        responseHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] }
    ) {
        self.sslContext = sslContext
        plaintext = PrefaceSniffingChannel(
            responder: responder, timeouts: timeouts, streams: streams, metrics: metrics, faults: faults,
            responseHandlers: responseHandlers)
    }

    /// The server's TLS context, offering ALPN `h2` then `http/1.1`.
    static func context(_ configuration: TLSConfiguration) throws -> NIOSSLContext {
        var configuration = configuration
        configuration.applicationProtocols = ["h2", "http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return plaintext.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await plaintext.handle(value: value, logger: logger)
    }
}

/// Reads until the bytes are, or cannot be, the HTTP/2 preface; then sets up the pipeline, replays, and leaves.
/// Until then it owns the connection's end: EOF (the client closed or half-closed), an error, the server stopping
/// (`ChannelShouldQuiesceEvent`) or the timeout close it, so no descriptor outlives a client that never spoke.
final class PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// A listener that takes HTTP/2 only got other bytes.
    struct NotHTTP2: Error {}

    enum State {
        /// Reading the first bytes.
        case sniffing
        /// HTTP/2, its SETTINGS held back by a `settings_delay` fault; bytes read meanwhile are kept for it.
        case holdingSettings
        /// The protocol is known and its pipeline being set up; bytes read meanwhile are kept for it.
        case decided
        /// Closed before a protocol was known.
        case abandoned
    }

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private let promise: EventLoopPromise<PrefaceSniffingChannel.Negotiated>
    private let configure: (Bool) -> EventLoopFuture<PrefaceSniffingChannel.Negotiated>
    private let timeout: TimeAmount
    /// Takes a `settings_delay` fault for an HTTP/2 connection, if one is set.
    private let settingsDelay: () -> TimeAmount?
    private var buffered: ByteBuffer?
    private var state = State.sniffing
    /// The protocol TLS's ALPN agreed on, if any: then the first bytes are that protocol's, whatever they are. Only
    /// where nothing was agreed (cleartext, TLS without ALPN) do the first bytes decide.
    private var agreed: String?
    private var timer: Scheduled<Void>?

    init(
        promise: EventLoopPromise<PrefaceSniffingChannel.Negotiated>, timeout: TimeAmount,
        settingsDelay: @escaping () -> TimeAmount? = { nil },
        configure: @escaping (Bool) -> EventLoopFuture<PrefaceSniffingChannel.Negotiated>
    ) {
        self.promise = promise
        self.timeout = timeout
        self.settingsDelay = settingsDelay
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (sniffer, context) = bound.value
            sniffer.abandon(context: context, ChannelError.connectTimeout(sniffer.timeout))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if buffered == nil { buffered = incoming } else { buffered!.writeBuffer(&incoming) }
        guard case .sniffing = state, let bytes = buffered?.readableBytesView else { return }
        let isHTTP2: Bool
        switch agreed {
        case "h2"?:
            // Agreed by ALPN: whatever comes is HTTP/2's, and a bad preface is a connection error for NIOHTTP2 to
            // answer (GOAWAY PROTOCOL_ERROR, RFC 9113 §3.4), not an HTTP/1.1 request.
            isHTTP2 = true
        case "http/1.1"?:
            isHTTP2 = false
        default:
            let count = min(bytes.count, Self.preface.count)
            isHTTP2 = bytes.prefix(count).elementsEqual(Self.preface.prefix(count))
            if isHTTP2 && count < Self.preface.count { return }  // a prefix of the preface so far: wait for more
        }
        timer?.cancel()
        timer = nil
        if isHTTP2, let delay = settingsDelay() {
            state = .holdingSettings
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: delay) {
                let (sniffer, context) = bound.value
                guard case .holdingSettings = sniffer.state else { return }
                sniffer.timer = nil
                sniffer.setUp(isHTTP2: true, context: context)
            }
            return
        }
        setUp(isHTTP2: isHTTP2, context: context)
    }

    /// Sets up the protocol's pipeline, then replays the bytes read so far into it.
    private func setUp(isHTTP2: Bool, context: ChannelHandlerContext) {
        state = .decided
        configure(isHTTP2).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let negotiated):
                self.promise.succeed(negotiated)
                if let pending = self.buffered {
                    self.buffered = nil
                    context.fireChannelRead(self.wrapInboundOut(pending))
                    context.fireChannelReadComplete()
                }
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            case .failure(let error):
                self.promise.fail(error)
                context.close(promise: nil)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .decided = state, buffered == nil { context.fireChannelReadComplete() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch state {
        case .sniffing, .holdingSettings: break
        case .decided, .abandoned: return context.fireUserInboundEventTriggered(event)
        }
        if case .handshakeCompleted(let negotiated) = event as? TLSUserEvent {
            agreed = negotiated
            context.fireUserInboundEventTriggered(event)
        } else if event is ChannelShouldQuiesceEvent {
            abandon(context: context, ChannelError.ioOnClosedChannel)
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            abandon(context: context, ChannelError.eof)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard isUndecided else { return context.fireErrorCaught(error) }
        abandon(context: context, error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if isUndecided {
            state = .abandoned
            timer?.cancel()
            promise.fail(ChannelError.eof)
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if isUndecided {
            state = .abandoned
            promise.fail(ChannelError.ioOnClosedChannel)
        }
    }

    /// Whether the connection is still this handler's: no pipeline set up for it yet.
    private var isUndecided: Bool {
        switch state {
        case .sniffing, .holdingSettings: true
        case .decided, .abandoned: false
        }
    }

    /// Closes a connection whose protocol is not known yet (or whose HTTP/2 pipeline is held back).
    private func abandon(context: ChannelHandlerContext, _ error: any Error) {
        guard isUndecided else { return }
        state = .abandoned
        timer?.cancel()
        timer = nil
        promise.fail(error)
        context.close(promise: nil)
    }
}
