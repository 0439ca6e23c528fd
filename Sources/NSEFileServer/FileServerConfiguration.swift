import NSESystem

/// How `nse files` listens and where it keeps files.
public struct FileServerConfiguration: Sendable {
    public var host: String
    /// 0: a free port, chosen by the system.
    public var port: Int
    /// The storage folder (created when missing).
    public var storage: String
    /// PEM certificate chain and key: HTTPS, with HTTP/2 and HTTP/1.1 offered by ALPN.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// The largest file accepted; a larger upload is answered 413.
    public var maxSize: Int
    /// Requests kept for `GET /control/requests`.
    public var requestLogCapacity: Int
    /// How long the answers still going at SIGTERM may take before their connections are closed.
    public var shutdownGrace: Duration
    /// How long a new connection has to send its first request head, TLS handshake included.
    public var firstRequestTimeout: Duration
    /// How long a connection may stay idle between requests (or an upload's body stall).
    public var idleTimeout: Duration

    public static let defaultMaxSize = 64 * 1024 * 1024
    public static let defaultRequestLogCapacity = 10_000

    public init(
        host: String, port: Int, storage: String, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil,
        maxSize: Int = defaultMaxSize, requestLogCapacity: Int = defaultRequestLogCapacity,
        shutdownGrace: Duration = .seconds(2), firstRequestTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60)
    ) {
        self.host = host
        self.port = port
        self.storage = storage
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.maxSize = maxSize
        self.requestLogCapacity = requestLogCapacity
        self.shutdownGrace = shutdownGrace
        self.firstRequestTimeout = firstRequestTimeout
        self.idleTimeout = idleTimeout
    }

    /// The default storage folder: `$XDG_DATA_HOME/nse/files`, else `~/.local/share/nse/files`.
    public static func defaultStorage() -> String {
        if let data = Environment.get("XDG_DATA_HOME") { return Path.join(data, "nse", "files") }
        return Path.join(Environment.get("HOME") ?? "/tmp", ".local", "share", "nse", "files")
    }
}
