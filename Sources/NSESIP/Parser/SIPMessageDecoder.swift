public import NIOCore

/// A `ByteToMessageDecoder` framing SIP messages on a TCP or TLS stream by Content-Length.
public struct SIPMessageDecoder: ByteToMessageDecoder {
    /// Decoded messages.
    public typealias InboundOut = SIPMessage

    /// The limits applied to every message.
    public let limits: SIPParserLimits
    private var pendingHead: SIPParser.Head? = nil
    private var pendingHeadLength = 0
    private var pendingBodyLength = 0

    /// Creates a decoder with the given limits.
    public init(limits: SIPParserLimits = .default) {
        self.limits = limits
    }

    /// Decodes as many complete messages as the buffer holds, skipping CRLF keep-alives.
    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let message = try decodeMessage(&buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(message))
        return .continue
    }

    /// Decodes remaining messages at end of stream; an incomplete trailing message is dropped.
    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        try decode(context: context, buffer: &buffer)
    }

    /// Decodes one message from the front of the buffer, or returns nil when more bytes are needed.
    public mutating func decodeMessage(_ buffer: inout ByteBuffer) throws(SIPError) -> SIPMessage? {
        if pendingHead == nil {
            // Skip keep-alive CRLFs between messages (RFC 5626 §3.5.1).
            while let b = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self), b == 0x0D || b == 0x0A {
                buffer.moveReaderIndex(forwardBy: 1)
            }
            guard buffer.readableBytes > 0 else { return nil }
            let limit = limits.maxHeaderSectionSize
            let end = buffer.withUnsafeReadableBytes { SIPParser.findHeaderEnd($0, limit: limit) }
            guard let end else {
                if buffer.readableBytes > limit + 4 {
                    throw .tooLarge("header section exceeds the \(limit)-byte limit")
                }
                return nil
            }
            let headBytes = buffer.getBytes(at: buffer.readerIndex, length: end.headEnd) ?? []
            let head = try SIPParser.parseHead(headBytes[...], limits: limits)
            var length = 0
            if let lengthText = head.headers["Content-Length"] {
                guard let l = SIPSyntax.parseInt(Substring(lengthText)) else {
                    throw .malformed("invalid Content-Length")
                }
                length = l
            }
            guard length <= limits.maxBodySize else {
                throw .tooLarge("Content-Length \(length) exceeds the \(limits.maxBodySize)-byte body limit")
            }
            guard end.bodyStart + length <= limits.maxMessageSize else {
                throw .tooLarge("message exceeds the \(limits.maxMessageSize)-byte limit")
            }
            pendingHead = head
            pendingHeadLength = end.bodyStart
            pendingBodyLength = length
        }
        guard let head = pendingHead, buffer.readableBytes >= pendingHeadLength + pendingBodyLength else { return nil }
        buffer.moveReaderIndex(forwardBy: pendingHeadLength)
        let body = buffer.readBytes(length: pendingBodyLength) ?? []
        pendingHead = nil
        return head.message(body: body)
    }
}
