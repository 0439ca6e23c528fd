public import NIOCore

/// A `MessageToByteEncoder` writing SIP messages to a stream (Content-Length always correct).
public struct SIPMessageEncoder: MessageToByteEncoder {
    /// Messages to encode.
    public typealias OutboundIn = SIPMessage

    /// Creates an encoder.
    public init() {}

    /// Writes the wire form of `data` into `out`.
    public func encode(data: SIPMessage, out: inout ByteBuffer) throws {
        data.write(into: &out)
    }
}
