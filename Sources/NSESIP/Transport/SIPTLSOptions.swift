/// How a TLS client connection authenticates the server.
public struct SIPTLSOptions: Sendable, Hashable {
    /// The source of trust for the server certificate.
    public enum Trust: Sendable, Hashable {
        /// The system's default trust store.
        case systemDefault
        /// CA certificates from a PEM file.
        case caFile(String)
        /// Only a server whose chain contains this exact certificate (PEM file path).
        case pinnedCertificateFile(String)
        /// Only a server whose chain contains this exact certificate (PEM bytes).
        case pinnedCertificatePEM([UInt8])
    }

    /// The trust source.
    public var trust: Trust
    /// Whether the certificate must match the server name (turn off only in tests).
    public var verifyHostname: Bool
    /// The SNI / verification name; defaults to the proxy host when it is not an IP literal.
    public var serverName: String?

    /// Creates TLS options.
    public init(trust: Trust = .systemDefault, verifyHostname: Bool = true, serverName: String? = nil) {
        self.trust = trust
        self.verifyHostname = verifyHostname
        self.serverName = serverName
    }

    /// Trust in the CA certificates of a PEM file, without the host name check (nse's servers are reached by IP
    /// literal); nil: the defaults. How the app's account (`ca_file`), `nse send`, `nse call` and replay trust a
    /// TLS proxy.
    public static func caFile(_ path: String?) -> SIPTLSOptions {
        path.map { SIPTLSOptions(trust: .caFile($0), verifyHostname: false) } ?? SIPTLSOptions()
    }
}
