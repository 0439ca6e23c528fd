import NSESystem

/// A `sip:` or `sips:` URI (RFC 3261 §19.1).
public struct SIPURI: Sendable, Hashable, CustomStringConvertible {
    /// The URI scheme.
    public enum Scheme: String, Sendable, Hashable {
        /// Plain SIP.
        case sip
        /// SIP over TLS.
        case sips
    }

    /// The scheme (`sip` or `sips`).
    public var scheme: Scheme
    /// The user part as written (escapes kept), if any.
    public var user: String?
    /// The password part, if any (discouraged by RFC 3261).
    public var password: String?
    /// The host name or IP address, IPv6 without brackets.
    public var host: String
    /// The explicit port, if any.
    public var port: Int?
    /// URI parameters in order (`;transport=tcp;lr`).
    public var parameters: [SIPParameter]
    /// URI headers in order (`?subject=x&priority=y`).
    public var headers: [SIPParameter]

    /// Creates a URI from its parts.
    public init(
        scheme: Scheme = .sip, user: String? = nil, password: String? = nil, host: String, port: Int? = nil,
        parameters: [SIPParameter] = [], headers: [SIPParameter] = []
    ) {
        self.scheme = scheme
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.parameters = parameters
        self.headers = headers
    }

    /// Parses a URI such as `sip:bob@[::1]:5070;transport=tcp`.
    public init(parsing text: String) throws(SIPError) {
        let t = SIPSyntax.trim(Substring(text))
        guard let colon = t.utf8.firstIndex(of: 0x3A) else { throw .malformed("URI has no scheme") }
        let schemeText = ASCII.lowercased(t[t.startIndex..<colon])
        guard let scheme = Scheme(rawValue: schemeText) else { throw .malformed("unsupported URI scheme") }
        self.scheme = scheme
        var rest = t[t.utf8.index(after: colon)...]
        if let at = rest.utf8.firstIndex(of: UInt8(ascii: "@")) {
            let userinfo = rest[rest.startIndex..<at]
            if let pc = userinfo.utf8.firstIndex(of: 0x3A) {
                user = String(userinfo[userinfo.startIndex..<pc])
                password = String(userinfo[userinfo.utf8.index(after: pc)...])
            } else {
                user = String(userinfo)
                password = nil
            }
            guard !(user ?? "").isEmpty else { throw .malformed("empty user in URI") }
            rest = rest[rest.utf8.index(after: at)...]
        } else {
            user = nil
            password = nil
        }
        var headerPart: Substring = ""
        if let q = rest.utf8.firstIndex(of: UInt8(ascii: "?")) {
            headerPart = rest[rest.utf8.index(after: q)...]
            rest = rest[rest.startIndex..<q]
        }
        var paramPart: Substring = ""
        if let semi = rest.utf8.firstIndex(of: 0x3B) {
            paramPart = rest[semi...]
            rest = rest[rest.startIndex..<semi]
        }
        let hp = try SIPSyntax.parseHostPort(rest)
        host = hp.host
        port = hp.port
        parameters = try SIPSyntax.parseParameters(paramPart)
        var hs: [SIPParameter] = []
        for item in SIPSyntax.split(headerPart, at: 0x26) {
            if let eq = item.utf8.firstIndex(of: 0x3D) {
                hs.append(SIPParameter(String(item[item.startIndex..<eq]), String(item[item.utf8.index(after: eq)...])))
            } else {
                hs.append(SIPParameter(String(item), nil))
            }
        }
        headers = hs
    }

    /// `host[:port]` with IPv6 brackets.
    public var hostPort: String {
        var text = ""
        appendHostPort(to: &text)
        return text
    }

    /// Appends ``hostPort`` to `text`.
    func appendHostPort(to text: inout String) {
        text.append(SIPSyntax.formatHost(host))
        if let port {
            text.append(":")
            text.append(String(port))
        }
    }

    /// The value of the `transport` URI parameter, lowercased.
    public var transportParameter: String? {
        parameters.value(of: "transport").map { ASCII.lowercased($0) }
    }

    /// The wire form of the URI.
    public var description: String {
        var text = ""
        text.reserveCapacity(wireSize)
        appendWireForm(to: &text)
        return text
    }

    /// The wire form's length in bytes, at most.
    var wireSize: Int {
        var size = 8 + (user?.utf8.count ?? 0) + (password?.utf8.count ?? 0) + host.utf8.count + 8
        size += parameters.wireSize + headers.wireSize
        return size
    }

    /// Appends the wire form to `text`, piece by piece: a URI is written into every request line, From, To and
    /// Contact, and a string per piece made it one allocation in twenty of the SIP server's.
    func appendWireForm(to text: inout String) {
        text.append(scheme.rawValue)
        text.append(":")
        if let user {
            text.append(user)
            if let password {
                text.append(":")
                text.append(password)
            }
            text.append("@")
        }
        appendHostPort(to: &text)
        parameters.appendWireForm(to: &text)
        headers.appendWireForm(to: &text, opening: "?", separator: "&")
    }

    /// The address-of-record form: scheme, user and host only.
    public var addressOfRecord: SIPURI {
        SIPURI(scheme: scheme, user: user, host: host, port: port)
    }
}
