public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/1.1 GET of an encrypted file on the process's event loop: each piece of the body goes to `body` as it
/// arrives (on the loop), so nothing but the piece in hand is held. Cancellable from any thread: the connection is
/// closed and the future fails with ``Failure/cancelled``.
public final class MediaDownload: Sendable {
    /// Why a download did not bring the whole file. Names no URL, host or byte of the file: the URL is part of an
    /// encrypted message.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case connect(String)
        case status(Int)
        case tooLarge(limit: Int64)
        /// The connection closed before the body's end.
        case closedEarly(received: Int64)
        case transport(String)
        case cancelled
        /// What the body was handed to refused it (the file does not decrypt, the disk is full).
        case refused(String)

        public var description: String {
            switch self {
            case .connect(let why): "the file server cannot be reached (\(why))"
            case .status(let status): "the file server answered \(status)"
            case .tooLarge(let limit): "the file is larger than the \(limit) bytes its message announced"
            case .closedEarly(let received): "the file server closed the connection after \(received) bytes of the file"
            case .transport(let why): "the download failed (\(why))"
            case .cancelled: "the download was cancelled"
            case .refused(let why): why
            }
        }
    }

    private struct State {
        var channel: (any Channel)?
        var cancelled = false
    }

    private let state = Mutex(State())
    /// The bytes of the body received, once the body ended; the failure otherwise.
    public let result: EventLoopFuture<Int64>

    /// Starts the GET of `url` on `group`. `caFile` adds the app's CA (the device's `ca_file`, as liblinphone's
    /// `root_ca` applies to SIP and file transfer alike); the system's roots are trusted otherwise.
    public init(
        url: MediaURL, group: any EventLoopGroup, caFile: String?, maximumBytes: Int64,
        connectTimeout: TimeAmount = .seconds(10), body: @escaping (ByteBuffer) throws -> Void
    ) {
        let loop = group.next()
        let promise = loop.makePromise(of: Int64.self)
        result = promise.futureResult
        let context: NIOSSLContext?
        if url.secure {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let caFile {
                configuration.trustRoots = .file(caFile)
                configuration.certificateVerification = .noHostnameVerification
            }
            do { context = try NIOSSLContext(configuration: configuration) } catch {
                promise.fail(Failure.connect("TLS: \(error)"))
                return
            }
        } else {
            context = nil
        }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: url.target)
        head.headers.add(name: "Host", value: url.hostHeader)
        head.headers.add(name: "User-Agent", value: "nse-extension")
        head.headers.add(name: "Accept", value: "*/*")
        head.headers.add(name: "Connection", value: "close")
        let serverName = url.hostIsIPLiteral ? nil : url.host
        // Made on this thread, used on the loop only from the channel's initializer on (the loop's queue orders the
        // two): a handover NIOLoopBound cannot express, as it must be made on the loop.
        let handler = Handover(
            value: MediaResponseHandler(request: head, maximumBytes: maximumBytes, promise: promise, body: body))
        let connected = ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if let context {
                        try operations.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName))
                    }
                    try operations.addHTTPClientHandlers()
                    try operations.addHandler(handler.value)
                }
            }
            .connect(host: url.host, port: url.port)
        connected.whenComplete { [self] outcome in
            switch outcome {
            case .success(let channel):
                let cancelled = self.state.withLock { state in
                    state.channel = channel
                    return state.cancelled
                }
                if cancelled {
                    handler.value.cancel()
                    channel.close(promise: nil)
                }
            case .failure(let error):
                promise.fail(Failure.connect(Self.describe(error)))
            }
        }
    }

    /// Stops the download: the connection closes, ``result`` fails with ``Failure/cancelled`` unless it already ended.
    public func cancel() {
        let channel = state.withLock { state in
            state.cancelled = true
            return state.channel
        }
        guard let channel else { return }
        channel.eventLoop.execute {
            (try? channel.pipeline.syncOperations.handler(type: MediaResponseHandler.self))?.cancel()
            channel.close(promise: nil)
        }
    }

    /// An error's kind without what it may quote (a host name from the message).
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as IOError: "errno \(error.errnoCode)"
        case is ChannelError: "\(error)"
        case let error as NIOSSLError: "TLS \(error)"
        case is NIOConnectionError: "connection refused or unreachable"
        default: String(describing: type(of: error))
        }
    }
}

/// A value made on one thread and from then on used on the event loop alone.
private struct Handover<Value>: @unchecked Sendable {
    let value: Value
}

/// Writes the request when the connection is up, then takes the response: the status must be 200, the body no
/// longer than announced, and it must end before the connection closes.
final class MediaResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private enum Phase {
        case awaitingHead
        case receiving(Int64)
        case ended
    }

    private let request: HTTPRequestHead
    private let maximumBytes: Int64
    private let promise: EventLoopPromise<Int64>
    private let body: (ByteBuffer) throws -> Void
    private var phase = Phase.awaitingHead

    init(
        request: HTTPRequestHead, maximumBytes: Int64, promise: EventLoopPromise<Int64>,
        body: @escaping (ByteBuffer) throws -> Void
    ) {
        self.request = request
        self.maximumBytes = maximumBytes
        self.promise = promise
        self.body = body
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (phase, unwrapInboundIn(data)) {
        case (.awaitingHead, .head(let head)):
            guard head.status == .ok else { return fail(.status(Int(head.status.code)), context) }
            if let length = head.headers.first(name: "Content-Length").flatMap(Int64.init), length > maximumBytes {
                return fail(.tooLarge(limit: maximumBytes), context)
            }
            phase = .receiving(0)
        case (.receiving(let received), .body(let buffer)):
            let total = received + Int64(buffer.readableBytes)
            guard total <= maximumBytes else { return fail(.tooLarge(limit: maximumBytes), context) }
            phase = .receiving(total)
            do { try body(buffer) } catch { return fail(.refused("\(error)"), context) }
        case (.receiving(let received), .end):
            phase = .ended
            promise.succeed(received)
            context.close(promise: nil)
        case (.ended, _):
            break
        default:
            fail(.transport("an HTTP response out of order"), context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        switch phase {
        case .awaitingHead: fail(.closedEarly(received: 0), nil)
        case .receiving(let received): fail(.closedEarly(received: received), nil)
        case .ended: break
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(.transport(MediaDownload.describe(error)), context)
    }

    func cancel() { fail(.cancelled, nil) }

    private func fail(_ failure: MediaDownload.Failure, _ context: ChannelHandlerContext?) {
        if case .ended = phase { return }
        phase = .ended
        promise.fail(failure)
        context?.close(promise: nil)
    }
}
