import NSESystem

/// The transport protocol of a SIP connection.
public enum SIPTransportKind: String, Sendable, Hashable, CaseIterable {
    /// UDP datagrams (unreliable: requests are retransmitted).
    case udp
    /// A TCP stream.
    case tcp
    /// A TLS stream over TCP.
    case tls

    /// Parses `udp`, `tcp` or `tls` case-insensitively.
    public init?(token: String) {
        self.init(rawValue: ASCII.lowercased(SIPSyntax.trim(token)))
    }

    /// The transport for a proxy URI: `sips:` means TLS, otherwise the `transport` parameter, defaulting to UDP.
    public init(proxy uri: SIPURI) throws(SIPError) {
        if uri.scheme == .sips {
            self = .tls
            return
        }
        guard let param = uri.transportParameter else {
            self = .udp
            return
        }
        guard let kind = SIPTransportKind(token: param) else {
            throw SIPError(.invalidArgument, "unsupported transport parameter in proxy URI")
        }
        self = kind
    }

    /// The token used in Via headers (`UDP`, `TCP`, `TLS`).
    public var viaToken: String { rawValue.uppercased() }

    /// True for stream transports (no retransmission).
    public var isReliable: Bool { self != .udp }

    /// The default port: 5061 for TLS, 5060 otherwise.
    public var defaultPort: Int { self == .tls ? 5061 : 5060 }
}
