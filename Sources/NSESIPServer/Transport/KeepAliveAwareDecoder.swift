import NIOCore
import NSESIP

/// Frames SIP messages with NSESIP's decoder and answers RFC 5626 CRLFCRLF pings (between messages) with a CRLF pong.
struct KeepAliveAwareDecoder: ByteToMessageDecoder {
    typealias InboundOut = SIPMessage

    private var inner: SIPMessageDecoder
    private var atBoundary = true

    init(limits: SIPParserLimits) {
        inner = SIPMessageDecoder(limits: limits)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if atBoundary {
            var pings = 0
            while let bytes = buffer.getBytes(at: buffer.readerIndex, length: 4), bytes == [0x0D, 0x0A, 0x0D, 0x0A] {
                buffer.moveReaderIndex(forwardBy: 4)
                pings += 1
            }
            if pings > 0 {
                context.writeAndFlush(NIOAny(ByteBuffer(bytes: [0x0D, 0x0A])), promise: nil)
            }
        }
        guard let message = try inner.decodeMessage(&buffer) else {
            // Some bytes of a message are buffered: CRLFs from here on may be body bytes, not pings.
            atBoundary = buffer.readableBytes == 0
            return .needMoreData
        }
        atBoundary = true
        context.fireChannelRead(NIOAny(message))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        try decode(context: context, buffer: &buffer)
    }
}
