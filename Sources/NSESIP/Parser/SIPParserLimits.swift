/// Size limits enforced while parsing a SIP message.
public struct SIPParserLimits: Sendable, Hashable {
    /// Largest whole message (start line, headers and body) in bytes.
    public var maxMessageSize: Int
    /// Largest header section (start line and headers) in bytes.
    public var maxHeaderSectionSize: Int
    /// Largest body in bytes.
    public var maxBodySize: Int
    /// Largest number of header lines.
    public var maxHeaderCount: Int

    /// Creates limits; the defaults are 64 KiB total, 16 KiB headers, 60 KiB body, 128 header lines.
    public init(
        maxMessageSize: Int = 65_536, maxHeaderSectionSize: Int = 16_384, maxBodySize: Int = 61_440,
        maxHeaderCount: Int = 128
    ) {
        self.maxMessageSize = maxMessageSize
        self.maxHeaderSectionSize = maxHeaderSectionSize
        self.maxBodySize = maxBodySize
        self.maxHeaderCount = maxHeaderCount
    }

    /// The default limits.
    public static let `default` = SIPParserLimits()
}
