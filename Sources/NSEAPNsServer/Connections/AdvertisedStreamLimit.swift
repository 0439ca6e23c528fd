import NIOCore

/// Advertises SETTINGS_MAX_CONCURRENT_STREAMS while NIOHTTP2 runs with a higher hard cap, from the first byte.
///
/// NIOHTTP2 enforces the value it sends as a connection error; it is configured with a higher hard cap so that
/// streams over the advertised limit reach ``HTTP2ConnectionManager``, which refuses each with
/// RST_STREAM(REFUSED_STREAM) as RFC 9113 §5.1.2 allows. Sits between the socket (or TLS) and NIOHTTP2's handler,
/// where the frames are bytes, and does two things:
/// - outbound, sets the value in the server's first SETTINGS frame (the server preface, one frame written as one
///   buffer, RFC 9113 §3.4) to the advertised one;
/// - inbound, lets NIOHTTP2 apply its own settings at once: until the client acknowledges them NIOHTTP2 would use
///   its default of 100, and a client may send its first burst before it has read the server's SETTINGS. So an
///   acknowledgement is handed to NIOHTTP2 right after the client's first SETTINGS frame, and the client's own
///   first acknowledgement, when it comes, is dropped. Then the handler leaves the pipeline, unless the connection
///   may be throttled (``HTTP2ConnectionManager``): then it stays to send SETTINGS frames NIOHTTP2 never sees
///   (``advertise(_:)``, which NIOHTTP2 would enforce as a connection error) and drop the client's acks of them.
final class AdvertisedStreamLimit: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Inbound progress: the client preface, its first SETTINGS, its first SETTINGS ACK; then either done (the
    /// handler leaves) or watching for the acks of ``advertise(_:)``'s frames.
    enum Inbound {
        case preface
        case firstSettings
        case firstAck
        case watching
        case done
    }

    private var inbound = Inbound.preface
    private var rewritten = false
    private var pending = ByteBuffer()

    /// SETTINGS frame type, and its MAX_CONCURRENT_STREAMS identifier (RFC 9113 §6.5.2).
    static let settingsType: UInt8 = 0x4
    static let maxConcurrentStreams: UInt16 = 0x3

    private let advertised: UInt32
    /// Whether ``advertise(_:)`` may be used: the handler then stays in the pipeline.
    private let staysForUpdates: Bool
    /// SETTINGS frames sent by ``advertise(_:)`` whose ack has not come: those acks are dropped.
    private var unackedUpdates = 0
    private var context: ChannelHandlerContext?

    init(advertised: UInt32, staysForUpdates: Bool = false) {
        self.advertised = advertised
        self.staysForUpdates = staysForUpdates
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Sends a SETTINGS frame with MAX_CONCURRENT_STREAMS `value` below NIOHTTP2, between the whole frames it
    /// writes; the client's ack of it is dropped. Only with `staysForUpdates`.
    func advertise(_ value: UInt32) {
        guard staysForUpdates, let context else { return }
        var frame = context.channel.allocator.buffer(capacity: 15)
        frame.writeBytes([0, 0, 6, Self.settingsType, 0, 0, 0, 0, 0])
        frame.writeInteger(Self.maxConcurrentStreams)
        frame.writeInteger(value)
        unackedUpdates += 1
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !rewritten else { return context.write(data, promise: promise) }
        var buffer = unwrapOutboundIn(data)
        // Only the preface's SETTINGS matters: NIOHTTP2 sends no other with this setting.
        rewritten = true
        Self.rewrite(&buffer, maxConcurrentStreams: advertised)
        context.write(wrapOutboundOut(buffer), promise: promise)
        leaveIfDone(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard inbound != .done else { return context.fireChannelRead(data) }
        // Frames are parsed for as long as the handler is here: acks of our own SETTINGS may come in any read.
        var incoming = unwrapInboundIn(data)
        pending.writeBuffer(&incoming)
        var output = ByteBuffer()
        while inbound != .done {
            if inbound == .preface {
                guard pending.readableBytes >= 24, let preface = pending.readSlice(length: 24) else { break }
                output.writeImmutableBuffer(preface)
                inbound = .firstSettings
                continue
            }
            guard pending.readableBytes >= 9,
                let lengthHigh = pending.getInteger(at: pending.readerIndex, as: UInt8.self),
                let lengthLow = pending.getInteger(at: pending.readerIndex + 1, as: UInt16.self),
                let type = pending.getInteger(at: pending.readerIndex + 3, as: UInt8.self),
                let flags = pending.getInteger(at: pending.readerIndex + 4, as: UInt8.self)
            else { break }
            let length = 9 + (Int(lengthHigh) << 16 | Int(lengthLow))
            guard pending.readableBytes >= length, let frame = pending.readSlice(length: length) else { break }
            let isSettings = type == Self.settingsType
            if inbound == .firstSettings, isSettings, flags & 0x1 == 0 {
                output.writeImmutableBuffer(frame)
                output.writeBytes(Self.settingsAck)
                inbound = .firstAck
            } else if inbound == .firstAck, isSettings, flags & 0x1 != 0 {
                // The client's acknowledgement of what NIOHTTP2 already applied: dropped.
                inbound = staysForUpdates ? .watching : .done
            } else if inbound == .watching, isSettings, flags & 0x1 != 0, unackedUpdates > 0 {
                unackedUpdates -= 1  // acks come in order (RFC 9113 §6.5.3), and NIOHTTP2 has none outstanding
            } else {
                output.writeImmutableBuffer(frame)
            }
        }
        if inbound == .done {
            output.writeBuffer(&pending)
            pending = ByteBuffer()
        } else {
            pending.discardReadBytes()  // only a partial frame is kept: a long-lived connection's buffer stays small
        }
        if output.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(output)) }
        leaveIfDone(context: context)
    }

    /// An empty SETTINGS frame with the ACK flag.
    static let settingsAck: [UInt8] = [0, 0, 0, settingsType, 0x1, 0, 0, 0, 0]

    private func leaveIfDone(context: ChannelHandlerContext) {
        if rewritten, inbound == .done { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }

    /// Sets MAX_CONCURRENT_STREAMS in a buffer that starts with a whole, non-ACK SETTINGS frame; leaves any other
    /// buffer as it is. Returns whether it rewrote.
    @discardableResult
    static func rewrite(_ buffer: inout ByteBuffer, maxConcurrentStreams value: UInt32) -> Bool {
        let start = buffer.readerIndex
        guard buffer.readableBytes >= 9,
            let lengthHigh = buffer.getInteger(at: start, as: UInt8.self),
            let lengthLow = buffer.getInteger(at: start + 1, as: UInt16.self),
            buffer.getInteger(at: start + 3, as: UInt8.self) == settingsType,
            let flags = buffer.getInteger(at: start + 4, as: UInt8.self), flags & 0x1 == 0
        else { return false }
        let length = Int(lengthHigh) << 16 | Int(lengthLow)
        guard length % 6 == 0, buffer.readableBytes >= 9 + length else { return false }
        var rewritten = false
        var offset = start + 9
        while offset < start + 9 + length {
            if buffer.getInteger(at: offset, as: UInt16.self) == maxConcurrentStreams {
                buffer.setInteger(value, at: offset + 2)
                rewritten = true
            }
            offset += 6
        }
        return rewritten
    }
}
