import NIOCore

/// Frames a client's TCP/TLS stream with `SIPMessageDecoder`, and makes a stream that ends in the middle of a
/// message an error: the connection's `Inbound` then throws why, instead of ending as if the peer had closed between
/// messages.
struct SIPStreamClientDecoder: ByteToMessageDecoder {
    typealias InboundOut = SIPMessage

    private var inner: SIPMessageDecoder

    init(limits: SIPParserLimits) {
        inner = SIPMessageDecoder(limits: limits)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        try inner.decode(context: context, buffer: &buffer)
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        let state = try inner.decode(context: context, buffer: &buffer)
        // Keep-alive CRLFs between messages are consumed by the decoder: what is left is part of a message.
        if state == .needMoreData, seenEOF, buffer.readableBytes > 0 {
            let count = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: count)
            throw SIPError(.transport, "connection closed in the middle of a message (\(count) bytes received)")
        }
        return state
    }
}
