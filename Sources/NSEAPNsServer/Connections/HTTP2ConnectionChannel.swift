import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2

/// `nse serve`'s HTTP/2 connection: NIOHTTP2 with a stream limit enforced per stream, a connection manager that
/// always closes (``HTTP2ConnectionManager``) and Hummingbird's request handling on each stream.
///
/// Why not Hummingbird's `HTTP2Channel`: NIOHTTP2 treats a HEADERS frame over SETTINGS_MAX_CONCURRENT_STREAMS as a
/// connection error (GOAWAY PROTOCOL_ERROR, every stream in flight lost), where RFC 9113 §5.1.2 allows, and APNs
/// clients expect, a stream error: RST_STREAM(REFUSED_STREAM) for the excess only, which a client retries safely.
/// So NIOHTTP2 is configured with a hard cap well above what is advertised (``HTTP2Limits/hardCap``), the SETTINGS
/// frame on the wire says ``HTTP2Limits/maxConcurrentStreams`` (``AdvertisedStreamLimit``), and each stream beyond
/// that is refused here before any request handling. And Hummingbird's connection manager waits for a PING ack
/// before its second GOAWAY, forever when the client stops reading: ours does not.
struct HTTP2ConnectionChannel: ServerChildChannel {
    /// A stream as the connection hands it out: refused (already reset), or open with its HTTP parts.
    enum Stream: Sendable {
        case refused
        case open(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let streams: NIOHTTP2Handler.AsyncStreamMultiplexer<Stream>
        let channel: any Channel
    }

    let streamChannel: HTTP2StreamChannel
    let limits: HTTP2Limits

    init(
        responder: @escaping HTTPChannelHandler.Responder, limits: HTTP2Limits,
        streamHandlers: @escaping @Sendable () -> [any RemovableChannelHandler]
    ) {
        self.limits = limits
        streamChannel = HTTP2StreamChannel(responder: responder, additionalHandlers: streamHandlers)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let advertiser = AdvertisedStreamLimit(
                advertised: UInt32(limits.maxConcurrentStreams), staysForUpdates: limits.throttleAfterRejection)
            let manager = HTTP2ConnectionManager(limits: limits, advertiser: advertiser)
            let boundManager = NIOLoopBound(manager, eventLoop: channel.eventLoop)
            var configuration = NIOHTTP2Handler.Configuration()
            configuration.connection.initialSettings = nioDefaultSettings.map { setting in
                setting.parameter == .maxConcurrentStreams
                    ? HTTP2Setting(parameter: .maxConcurrentStreams, value: limits.hardCap) : setting
            }
            // Refused streams' DATA frames arrive after the reset: remember enough resets to drop them quietly.
            configuration.connection.maximumRecentlyResetStreams = limits.hardCap
            try channel.pipeline.syncOperations.addHandler(advertiser)
            let streamChannel = self.streamChannel
            let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                mode: .server, streamDelegate: manager.streamDelegate, frameDelegate: manager.frameDelegate,
                configuration: configuration
            ) { stream in
                stream.eventLoop.makeCompletedFuture { () throws -> Stream in
                    guard boundManager.value.admit(stream) else {
                        stream.writeAndFlush(HTTP2Frame.FramePayload.rstStream(.refusedStream), promise: nil)
                        return .refused
                    }
                    return .open(try streamChannel.setupSynchronously(channel: stream, logger: logger))
                }
            }
            try channel.pipeline.syncOperations.addHandler(manager)
            return Value(streams: multiplexer, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            try await withThrowingDiscardingTaskGroup { group in
                for try await stream in value.streams.inbound {
                    guard case .open(let channel) = stream else { continue }
                    group.addTask { await streamChannel.handle(value: channel, logger: logger) }
                }
            }
        } catch {
            logger.debug("HTTP/2 connection ended", metadata: ["http.error": "\(error)"])
        }
    }
}

/// The limits of one HTTP/2 connection.
struct HTTP2Limits: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS as advertised; streams beyond it get RST_STREAM(REFUSED_STREAM).
    var maxConcurrentStreams = StreamSettings.defaultMaxConcurrentStreams
    /// What NIOHTTP2 itself allows before it gives up on the connection (GOAWAY PROTOCOL_ERROR): only a client
    /// that ignores thousands of refusals reaches it.
    var hardCap: Int { maxConcurrentStreams + 4096 }
    /// `--throttle-after-rejection`: a rejected request lowers the connection's limit to ``throttledStreams`` until
    /// the next 200 or ``throttleQuietPeriod`` without a rejection (``HTTP2ConnectionManager``).
    var throttleAfterRejection = false
    /// The limit while throttled, as APNs's reported one.
    static let throttledStreams = 1
    var throttleQuietPeriod: TimeAmount = .seconds(5)
    /// An HTTP/2 connection with no open stream for this long is closed (GOAWAY), as APNs closes idle ones.
    var idleTimeout: TimeAmount = .seconds(3600)
    /// After the first GOAWAY of a graceful close: how long to wait for the PING ack before the final GOAWAY.
    var pingAckTimeout: TimeAmount = .seconds(1)
    /// After the final GOAWAY: streams still open then are cut and the connection closed.
    var gracefulCloseTimeout: TimeAmount = .seconds(5)
}

/// One HTTP/2 stream: Hummingbird's request handling over HTTP parts (as its own HTTP/2 stream channel does).
struct HTTP2StreamChannel: HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let additionalHandlers: @Sendable () -> [any RemovableChannelHandler]

    init(
        responder: @escaping HTTPChannelHandler.Responder,
        additionalHandlers: @escaping @Sendable () -> [any RemovableChannelHandler]
    ) {
        self.responder = responder
        self.additionalHandlers = additionalHandlers
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture { try setupSynchronously(channel: channel, logger: logger) }
    }

    func setupSynchronously(channel: any Channel, logger: Logger) throws -> Value {
        // Frames first: END_STREAM folding sees the frames the codec writes.
        try channel.pipeline.syncOperations.addHandler(EndStreamFolding())
        try channel.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPServerCodec())
        try channel.pipeline.syncOperations.addHandlers(additionalHandlers())
        try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(logger: logger))
        return try Value(wrappingChannelSynchronously: channel)
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
