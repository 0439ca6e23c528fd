import NIOCore
import NIOHPACK
import NIOHTTP2

/// Ends HTTP/2 responses the way APNs does: the last HEADERS or DATA frame carries END_STREAM, never an extra empty
/// DATA frame after it.
///
/// NIO's HTTP/2-to-HTTP codec ends every response with an empty DATA frame. That is valid HTTP/2, but APNs never
/// sends one, and real APNs clients depend on it: aioapns parses every DATA frame as JSON, fails on the empty one
/// and drops the whole connection with every push in flight on it. So each stream holds back its latest HEADERS or
/// DATA frame until the next one is written; an empty final DATA frame is folded into the held one. Event streams
/// (`text/event-stream`) pass straight through, so no event waits for the next.
final class EndStreamFolding: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var held: (payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?)?
    private var passThrough = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let payload = unwrapOutboundIn(data)
        guard !passThrough else { return context.write(data, promise: promise) }
        switch payload {
        case .headers(let headers) where !headers.endStream:
            releaseHeld(context: context)
            if headers.headers.first(name: "content-type")?.hasPrefix("text/event-stream") == true {
                passThrough = true
                context.write(data, promise: promise)
            } else {
                held = (payload, promise)
            }
        case .data(let body) where body.endStream && body.data.readableBytes == 0:
            guard let (heldPayload, heldPromise) = held else { return context.write(data, promise: promise) }
            held = nil
            var folded = heldPayload
            folded.setEndStream()
            let written = heldPromise ?? context.eventLoop.makePromise()
            if let promise { written.futureResult.cascade(to: promise) }
            context.write(wrapOutboundOut(folded), promise: written)
        case .data(let body) where !body.endStream:
            releaseHeld(context: context)
            held = (payload, promise)
        default:
            releaseHeld(context: context)
            context.write(data, promise: promise)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        releaseHeld(context: context)
        context.flush()
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let (payload, promise) = held {
            held = nil
            context.write(wrapOutboundOut(payload), promise: promise)
            context.flush()
        }
    }

    private func releaseHeld(context: ChannelHandlerContext) {
        guard let (payload, promise) = held else { return }
        held = nil
        context.write(wrapOutboundOut(payload), promise: promise)
    }
}

extension HTTP2Frame.FramePayload {
    fileprivate mutating func setEndStream() {
        switch self {
        case .headers(var headers):
            headers.endStream = true
            self = .headers(headers)
        case .data(var data):
            data.endStream = true
            self = .data(data)
        default:
            break
        }
    }
}
