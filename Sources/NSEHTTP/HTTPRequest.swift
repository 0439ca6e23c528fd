/// Which HTTP protocol version to ask libcurl for.
public enum HTTPVersionPreference: Sendable, Hashable {
    /// HTTP/1.1 only.
    case http11
    /// Cleartext HTTP/2 with prior knowledge (h2c, no upgrade); over https it negotiates h2 via ALPN.
    case http2PriorKnowledge
    /// HTTP/2 over TLS via ALPN, falling back to HTTP/1.1; plain http:// URLs use HTTP/1.1.
    case http2OverTLS
    /// HTTP/2 over TLS for https (falls back to 1.1), HTTP/1.1 for http.
    case automatic
}

/// A TLS client certificate and its private key (PEM files).
public struct HTTPClientCertificate: Sendable, Hashable {
    /// Path to the PEM certificate (may also hold the key).
    public var certificatePath: String
    /// Path to the PEM private key, when not in the certificate file.
    public var keyPath: String?
    /// Passphrase for an encrypted private key.
    public var keyPassword: String?

    /// Creates a client certificate reference.
    public init(certificatePath: String, keyPath: String? = nil, keyPassword: String? = nil) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.keyPassword = keyPassword
    }
}

/// TLS settings for one request.
public struct HTTPTLSOptions: Sendable, Hashable {
    /// PEM bundle of trusted CA certificates, replacing the system bundle; nil uses the system bundle.
    public var caFilePath: String?
    /// Pinned server public key: a PEM/DER public key file path, or "sha256//<base64>[;sha256//…]".
    public var pinnedPublicKey: String?
    /// Skips certificate and host name verification (tests only).
    public var insecureSkipVerify: Bool
    /// Client certificate for mutual TLS.
    public var clientCertificate: HTTPClientCertificate?

    /// Creates TLS settings; the defaults verify against the system CA bundle.
    public init(
        caFilePath: String? = nil,
        pinnedPublicKey: String? = nil,
        insecureSkipVerify: Bool = false,
        clientCertificate: HTTPClientCertificate? = nil
    ) {
        self.caFilePath = caFilePath
        self.pinnedPublicKey = pinnedPublicKey
        self.insecureSkipVerify = insecureSkipVerify
        self.clientCertificate = clientCertificate
    }
}

/// An outgoing HTTP request (redirects are not followed).
public struct HTTPRequest: Sendable {
    /// The method token, e.g. "GET" or "POST".
    public var method: String
    /// The absolute http:// or https:// URL.
    public var url: String
    /// Header fields sent after libcurl's own Host/Accept, in this order.
    public var headers: HTTPHeaders
    /// The request body (never included in errors).
    public var body: [UInt8]
    /// Limit for the whole exchange in seconds; must be positive.
    public var timeout: Double
    /// Limit for connecting (TCP + TLS) in seconds; must be positive.
    public var connectTimeout: Double
    /// The HTTP version to negotiate.
    public var version: HTTPVersionPreference
    /// TLS settings for https URLs.
    public var tls: HTTPTLSOptions
    /// Proxy URL; nil honours the *_proxy environment variables, "" disables proxies.
    public var proxy: String?

    /// Creates a request.
    public init(
        method: String = "GET",
        url: String,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        timeout: Double = 30,
        connectTimeout: Double = 10,
        version: HTTPVersionPreference = .automatic,
        tls: HTTPTLSOptions = HTTPTLSOptions(),
        proxy: String? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.version = version
        self.tls = tls
        self.proxy = proxy
    }

    /// A GET request.
    public static func get(url: String, headers: HTTPHeaders = [:]) -> HTTPRequest {
        HTTPRequest(method: "GET", url: url, headers: headers)
    }

    /// A POST of JSON bytes with "content-type: application/json" (unless `headers` sets one).
    public static func post(url: String, json: [UInt8], headers: HTTPHeaders = [:]) -> HTTPRequest {
        var all = headers
        if !all.contains(name: "content-type") {
            all.add(name: "Content-Type", value: "application/json")
        }
        return HTTPRequest(method: "POST", url: url, headers: all, body: json)
    }
}

/// A received HTTP response (any status, including 4xx/5xx).
public struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Header fields with lowercase names, in arrival order, repeats kept.
    public var headers: HTTPHeaders
    /// The response body (bounded by the client's limit).
    public var body: [UInt8]
    /// The negotiated protocol version: "1.0", "1.1", "2" or "3".
    public var httpVersion: String
    /// Wall time of the whole exchange in milliseconds.
    public var totalTimeMilliseconds: Double

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders, body: [UInt8], httpVersion: String, totalTimeMilliseconds: Double) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.totalTimeMilliseconds = totalTimeMilliseconds
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
