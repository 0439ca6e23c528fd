import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL

/// One cleartext listener for HTTP/1.1 and HTTP/2 with prior knowledge: the first bytes of a connection decide.
/// A connection that opens with the HTTP/2 client preface (`PRI * HTTP/2.0…`, RFC 9113 §3.4) gets Hummingbird's
/// HTTP/2 pipeline, any other gets its HTTP/1.1 pipeline; the bytes read while deciding are replayed into it.
struct PrefaceSniffingChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(HTTP1Channel.Value)
        case http2(HTTP2Channel.Value)
    }

    struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<Negotiated>
        let channel: any Channel
    }

    let http1: HTTP1Channel
    let http2: HTTP2Channel

    init(responder: @escaping HTTPChannelHandler.Responder) {
        http1 = HTTP1Channel(responder: responder)
        http2 = HTTP2Channel(responder: responder, configuration: Self.http2Configuration)
    }

    /// HTTP/2 as APNs speaks it: END_STREAM on the last frame (``EndStreamFolding``); on shutdown, connections whose
    /// client stops reading are closed 5 s after the second GOAWAY rather than holding the server up.
    static var http2Configuration: HTTP2Channel.Configuration {
        HTTP2Channel.Configuration(
            gracefulCloseTimeout: .seconds(5),
            streamConfiguration: HTTP1Channel.Configuration(additionalChannelHandlers: [EndStreamFoldingInstaller()]))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let promise = channel.eventLoop.makePromise(of: Negotiated.self)
        let sniffer = PrefaceSniffer(promise: promise) { isHTTP2 in
            isHTTP2
                ? http2.setup(channel: channel, logger: logger).map { .http2($0) }
                : http1.setup(channel: channel, logger: logger).map { .http1($0) }
        }
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
            case .http1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("connection closed before its protocol was known: \(error)")
        }
    }
}

/// The TLS listener: TLS (offering ALPN `h2` and `http/1.1`), then the same decision by the first decrypted bytes.
/// Deciding by bytes rather than by ALPN alone also serves clients that speak HTTP/2 over TLS without offering ALPN,
/// as APNs does (aioapns, older pushy): Hummingbird's ALPN channel would take them for HTTP/1.1 and close them.
struct TLSPrefaceSniffingChannel: ServerChildChannel {
    typealias Value = PrefaceSniffingChannel.Value

    let sslContext: NIOSSLContext
    let plaintext: PrefaceSniffingChannel

    init(sslContext: NIOSSLContext, responder: @escaping HTTPChannelHandler.Responder) {
        self.sslContext = sslContext
        plaintext = PrefaceSniffingChannel(responder: responder)
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
final class PrefaceSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    private let promise: EventLoopPromise<PrefaceSniffingChannel.Negotiated>
    private let configure: (Bool) -> EventLoopFuture<PrefaceSniffingChannel.Negotiated>
    private var buffered: ByteBuffer?
    private var decided = false

    init(
        promise: EventLoopPromise<PrefaceSniffingChannel.Negotiated>,
        configure: @escaping (Bool) -> EventLoopFuture<PrefaceSniffingChannel.Negotiated>
    ) {
        self.promise = promise
        self.configure = configure
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if buffered == nil { buffered = incoming } else { buffered!.writeBuffer(&incoming) }
        guard !decided, let bytes = buffered?.readableBytesView else { return }
        let count = min(bytes.count, Self.preface.count)
        let isPrefix = bytes.prefix(count).elementsEqual(Self.preface.prefix(count))
        if isPrefix && count < Self.preface.count { return }  // a prefix of the preface so far: wait for more
        decided = true
        configure(isPrefix).assumeIsolated().whenComplete { result in
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
        if decided && buffered == nil { context.fireChannelReadComplete() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !decided {
            decided = true
            promise.fail(ChannelError.eof)
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !decided {
            decided = true
            promise.fail(ChannelError.ioOnClosedChannel)
        }
    }
}
