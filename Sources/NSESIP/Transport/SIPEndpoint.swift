/// A resolved proxy target: host, port and transport.
public struct SIPEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Host name or IP address (IPv6 without brackets).
    public var host: String
    /// Port number.
    public var port: Int
    /// Transport protocol.
    public var transport: SIPTransportKind

    /// Creates an endpoint.
    public init(host: String, port: Int, transport: SIPTransportKind) {
        self.host = host
        self.port = port
        self.transport = transport
    }

    /// Derives the endpoint from a proxy URI like `sip:127.0.0.1:5070;transport=tcp`.
    public init(proxy uri: SIPURI) throws(SIPError) {
        let kind = try SIPTransportKind(proxy: uri)
        self.init(host: uri.host, port: uri.port ?? kind.defaultPort, transport: kind)
    }

    /// Parses a proxy URI string into an endpoint.
    public init(proxy text: String) throws(SIPError) {
        try self.init(proxy: SIPURI(parsing: text))
    }

    /// `transport:host:port` for logs.
    public var description: String { "\(transport.rawValue):\(SIPSyntax.formatHost(host)):\(port)" }
}
