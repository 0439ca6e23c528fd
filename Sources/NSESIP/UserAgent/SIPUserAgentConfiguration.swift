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
    /// Decides the answer to each new incoming MESSAGE before it is sent, e.g. 200 only once the message is durably
    /// stored, 500 when it could not be (the sender then keeps it). Only MESSAGEs answered 2xx are delivered on
    /// `messages` and remembered as seen, so one refused can be accepted on a retransmission. Without an acceptor
    /// every MESSAGE is answered `autoAnswerStatus` at once.
    public var messageAcceptor: (@Sendable (SIPReceivedMessage) async -> SIPMessageAnswer)?
    /// Whether incoming INVITEs are offered on ``SIPUserAgent/incomingCalls`` (100 Trying sent at once); without
    /// it they are answered 501 Not Implemented.
    public var acceptsCalls: Bool = false
    /// Where every connection the agent opens records what it sends and receives (``SIPTrace``); nil, the default,
    /// records nothing and costs nothing.
    public var trace: SIPTrace?

    /// Creates a configuration with sensible defaults.
    public init(
        timers: SIPTimers = .default, tls: SIPTLSOptions = SIPTLSOptions(), limits: SIPParserLimits = .default,
        autoAnswerStatus: Int? = 200, userAgent: String? = "nse", maxAuthAttempts: Int = 3,
        connectTimeout: Duration = .seconds(5)
    ) {
        self.timers = timers
        self.tls = tls
        self.limits = limits
        self.autoAnswerStatus = autoAnswerStatus
        self.userAgent = userAgent
        self.maxAuthAttempts = maxAuthAttempts
        self.connectTimeout = connectTimeout
    }
}

/// The answer a ``SIPUserAgentConfiguration/messageAcceptor`` gives to an incoming MESSAGE.
public struct SIPMessageAnswer: Sendable, Equatable {
    public var statusCode: Int
    /// The reason phrase; nil for the standard one.
    public var reasonPhrase: String?

    public init(statusCode: Int, reasonPhrase: String? = nil) {
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase
    }

    /// 200 OK: the message is kept.
    public static let accepted = SIPMessageAnswer(statusCode: 200)
}
