/// Settings of a `SIPUserAgent`.
public struct SIPUserAgentConfiguration: Sendable {
    /// Transaction timers (shorten T1 in tests).
    public var timers: SIPTimers
    /// TLS trust settings for `sips:` / `transport=tls` proxies.
    public var tls: SIPTLSOptions
    /// Message size limits.
    public var limits: SIPParserLimits
    /// Status sent automatically to incoming MESSAGE, OPTIONS and NOTIFY; nil to send nothing.
    public var autoAnswerStatus: Int?
    /// The User-Agent header value; nil to omit it.
    public var userAgent: String?
    /// Authenticated retries allowed per request before `authenticationFailed`.
    public var maxAuthAttempts: Int
    /// TCP/TLS connect timeout.
    public var connectTimeout: Duration

    /// Creates a configuration with sensible defaults.
    public init(timers: SIPTimers = .default, tls: SIPTLSOptions = SIPTLSOptions(), limits: SIPParserLimits = .default,
                autoAnswerStatus: Int? = 200, userAgent: String? = "nse", maxAuthAttempts: Int = 3,
                connectTimeout: Duration = .seconds(5)) {
        self.timers = timers
        self.tls = tls
        self.limits = limits
        self.autoAnswerStatus = autoAnswerStatus
        self.userAgent = userAgent
        self.maxAuthAttempts = maxAuthAttempts
        self.connectTimeout = connectTimeout
    }
}
