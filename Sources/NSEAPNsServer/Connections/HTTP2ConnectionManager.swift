import NIOCore
import NIOHTTP2

/// Keeps an HTTP/2 connection's streams within the advertised limit and closes the connection, always.
///
/// A graceful close (SIGTERM, the idle timeout, or the client half-closing) goes as RFC 9113 §6.8 suggests: with no
/// stream open, one GOAWAY and close. Otherwise GOAWAY(2^31-1) and a PING, then the final GOAWAY naming the last
/// stream taken, on the PING ack or after ``HTTP2Limits/pingAckTimeout`` whichever comes first (a client that stops
/// reading never acks), then close when the last stream ends or ``HTTP2Limits/gracefulCloseTimeout`` after the
/// final GOAWAY, whichever comes first.
///
/// Why not NIOHTTP2's `NIOHTTP2ServerConnectionManagementHandler` (checked against 1.46): it has the idle timer, the
/// GOAWAY(2^31-1) and PING, the final GOAWAY on the ack and the grace period, but
/// - it waits for the ack for ever (its grace period starts after the final GOAWAY), with a stream open or not: a
///   client that stops reading would hold the connection, and SIGTERM, where here the wait is 1 s, and none without
///   a stream;
/// - its idle timer starts in `channelActive`, which a handler added once the preface is sniffed never sees;
/// - after NIOHTTP2's own GOAWAY for a connection error, its graceful close would raise the last stream ID, which
///   RFC 9113 §6.8 forbids and NIOHTTP2 refuses (`raisedGoawayLastStreamID`): the drain after an error stays here;
/// - it does not close on a half-close, refuse streams after the final GOAWAY, or send an injected GOAWAY.
/// What it would take over is one PING round trip and two timers, beside a handler that counts streams anyway.
///
/// With ``HTTP2Limits/throttleAfterRejection`` it also plays what providers report of APNs (pushy issues #476 and
/// #732, rdar://27870881): a 4xx or 5xx answer on the connection lowers its SETTINGS_MAX_CONCURRENT_STREAMS to 1, at
/// once and enforced (streams beyond 1 in flight get REFUSED_STREAM); the next 200, or
/// ``HTTP2Limits/throttleQuietPeriod`` without another rejection, raises it back to the configured limit.
final class HTTP2ConnectionManager: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    enum State {
        /// Serving; the idle timer runs while no stream is open.
        case open
        /// The first GOAWAY and the PING are out; waiting for the ack (or its timeout).
        case draining(ping: HTTP2PingData)
        /// The final GOAWAY is out: closing when the streams end, or at the deadline.
        case closing
        case closed
    }

    /// Whether a rejection has lowered the stream limit (``HTTP2Limits/throttleAfterRejection``).
    enum Throttle {
        case off
        case throttled
    }

    private let limits: HTTP2Limits
    /// Sends the SETTINGS frames of a throttle; nil when throttling is off.
    private let advertiser: AdvertisedStreamLimit?
    private var throttle = Throttle.off
    private var throttleTimer: Scheduled<Void>?
    private var state = State.open
    private var context: ChannelHandlerContext?
    /// Streams NIOHTTP2 has open (refused ones included until their reset is out).
    private var openStreams = 0
    /// Streams admitted to request handling, at most ``HTTP2Limits/maxConcurrentStreams``.
    private var admitted = 0
    private var lastStreamID = HTTP2StreamID(0)
    private var timer: Scheduled<Void>?

    init(limits: HTTP2Limits, advertiser: AdvertisedStreamLimit? = nil) {
        self.limits = limits
        self.advertiser = limits.throttleAfterRejection ? advertiser : nil
    }

    /// The limit enforced now: the configured one, or 1 while throttled.
    private var streamLimit: Int {
        switch throttle {
        case .off: limits.maxConcurrentStreams
        case .throttled: HTTP2Limits.throttledStreams
        }
    }

    /// Whether a new stream may be handled: false beyond the advertised limit (the caller resets it with
    /// REFUSED_STREAM) or once the final GOAWAY is out.
    func admit(_ stream: any Channel) -> Bool {
        switch state {
        case .open, .draining: break
        case .closing, .closed: return false
        }
        guard admitted < streamLimit else { return false }
        admitted += 1
        stream.closeFuture.assumeIsolatedUnsafeUnchecked().whenComplete { _ in self.admitted -= 1 }
        return true
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleIdleTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        throttleTimer?.cancel()
        throttleTimer = nil
        self.context = nil
        state = .closed
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        throttleTimer?.cancel()
        throttleTimer = nil
        state = .closed
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if case .ping(let ping, ack: true) = frame.payload, case .draining(let sent) = state, ping == sent {
            sendFinalGoAway(context: context)
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            startGracefulClose(context: context)
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            // The client sends nothing more: answer what it asked, then close.
            startGracefulClose(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// NIOHTTP2 hands on stream errors as well as connection errors. A stream error (a client's malformed stream,
    /// an answer its stream cannot carry) has reset that stream alone: the connection and its other streams go on.
    /// A connection error it has answered with GOAWAY and its code (RFC 9113 §5.4.1): the streams it took still get
    /// their answers, then the connection closes, as after a graceful close. Anything else (a reset socket, TLS)
    /// ends the connection at once.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if sentErrorGoAway {
            // After the stream delegate's calls already queued (each comes on the loop after the frame that made
            // it): a stream opened by the same read is counted before the close is decided.
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.execute {
                guard let context = bound.value.context else { return }
                bound.value.closeAfterStreams(context: context)
            }
        } else if !(error is any NIOHTTP2Error) {
            close(context: context)
        }
    }

    /// Set when NIOHTTP2 writes a GOAWAY with an error code: the next error it hands on is a connection error.
    private var sentErrorGoAway = false

    var frameDelegate: FrameDelegate { FrameDelegate(manager: self) }

    /// Sees the frames NIOHTTP2 writes, its own GOAWAYs for connection errors among them (they do not pass through
    /// this handler, which sits after it).
    struct FrameDelegate: NIOHTTP2FrameDelegate, @unchecked Sendable {
        let manager: HTTP2ConnectionManager

        func wroteFrame(_ frame: HTTP2Frame) {
            switch frame.payload {
            case .goAway(_, let code, _) where code != .noError:
                manager.sentErrorGoAway = true
            case .headers(let headers):
                guard manager.advertiser != nil, let context = manager.context,
                    let status = headers.headers.first(where: { $0.name == ":status" }).flatMap({ Int($0.value) })
                else { return }
                // After the answer's own frame, which NIOHTTP2 is writing now.
                let bound = NIOLoopBound(manager, eventLoop: context.eventLoop)
                context.eventLoop.execute { bound.value.answered(status: status) }
            default:
                break
            }
        }
    }

    // MARK: - Throttling after a rejection

    /// A rejection throttles the connection (or keeps it throttled, the quiet period starting again); a 200 while
    /// throttled lifts it.
    private func answered(status: Int) {
        guard let advertiser, let context else { return }
        switch (throttle, status) {
        case (_, 400...):
            if case .off = throttle {
                throttle = .throttled
                advertiser.advertise(UInt32(HTTP2Limits.throttledStreams))
            }
            throttleTimer?.cancel()
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            throttleTimer = context.eventLoop.scheduleTask(in: limits.throttleQuietPeriod) { bound.value.unthrottle() }
        case (.throttled, 200):
            unthrottle()
        case (.off, _), (.throttled, _):
            break
        }
    }

    private func unthrottle() {
        throttleTimer?.cancel()
        throttleTimer = nil
        guard case .throttled = throttle else { return }
        throttle = .off
        switch state {
        case .open, .draining: advertiser?.advertise(UInt32(limits.maxConcurrentStreams))
        case .closing, .closed: break
        }
    }

    // MARK: - Streams (NIOHTTP2's stream delegate, on the connection's event loop)

    private func streamCreated(_ id: HTTP2StreamID) {
        openStreams += 1
        if id > lastStreamID { lastStreamID = id }
        if case .open = state {
            timer?.cancel()
            timer = nil
        }
    }

    private func streamClosed(_ id: HTTP2StreamID) {
        openStreams -= 1
        guard openStreams == 0, let context else { return }
        switch state {
        case .open: scheduleIdleTimer()
        case .draining: break
        case .closing: close(context: context)
        case .closed: break
        }
    }

    var streamDelegate: StreamDelegate { StreamDelegate(manager: self) }

    struct StreamDelegate: NIOHTTP2StreamDelegate, @unchecked Sendable {
        let manager: HTTP2ConnectionManager

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            channel.eventLoop.execute { self.manager.streamCreated(id) }
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            channel.eventLoop.execute { self.manager.streamClosed(id) }
        }
    }

    // MARK: - Closing

    private func scheduleIdleTimer() {
        guard let context else { return }
        timer?.cancel()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limits.idleTimeout) {
            guard let context = bound.value.context else { return }
            bound.value.startGracefulClose(context: context)
        }
    }

    private func startGracefulClose(context: ChannelHandlerContext) {
        guard case .open = state else { return }
        timer?.cancel()
        timer = nil
        guard openStreams > 0 else {
            state = .closing
            write(goAway: lastStreamID, context: context)
            close(context: context)
            return
        }
        let ping = HTTP2PingData(withInteger: UInt64.random(in: .min ... .max))
        state = .draining(ping: ping)
        context.write(
            wrapOutboundOut(
                HTTP2Frame(
                    streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
            ), promise: nil)
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(ping, ack: false))), promise: nil)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limits.pingAckTimeout) {
            guard let context = bound.value.context else { return }
            bound.value.sendFinalGoAway(context: context)
        }
    }

    private func sendFinalGoAway(context: ChannelHandlerContext) {
        guard case .draining = state else { return }
        write(goAway: lastStreamID, context: context)
        closeAfterStreams(context: context)
    }

    /// The last GOAWAY is out: close when the open streams end, or ``HTTP2Limits/gracefulCloseTimeout`` from now.
    private func closeAfterStreams(context: ChannelHandlerContext) {
        switch state {
        case .closing, .closed: return
        case .open, .draining: break
        }
        timer?.cancel()
        timer = nil
        state = .closing
        guard openStreams > 0 else { return close(context: context) }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limits.gracefulCloseTimeout) {
            guard let context = bound.value.context else { return }
            bound.value.close(context: context)
        }
    }

    /// An injected fault (docs/serve.md, "Fault injection"): GOAWAY naming the stream before `streamID` as the last
    /// one taken, with APNs's `{"reason": …}` as debug data, and the connection closed at once. Streams still open
    /// are cut off, as when APNs drops a connection; their pushes' answers are never written.
    func goAway(before streamID: HTTP2StreamID?, reason: String, code: HTTP2ErrorCode = .noError) {
        guard let context else { return }
        if case .closed = state { return }
        timer?.cancel()
        timer = nil
        state = .closing
        var last = HTTP2StreamID(0)
        if let streamID, Int(streamID) > 2 { last = HTTP2StreamID(Int(streamID) - 2) }
        var data = context.channel.allocator.buffer(capacity: 32)
        data.writeString(#"{"reason":"\#(reason)"}"#)
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: code, opaqueData: data))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        close(context: context)
    }

    private func write(goAway lastStreamID: HTTP2StreamID, context: ChannelHandlerContext) {
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    private func close(context: ChannelHandlerContext) {
        if case .closed = state { return }
        state = .closed
        timer?.cancel()
        timer = nil
        context.close(promise: nil)
    }
}
