/// An `http` or `https` URL split for one request: the host to connect to, its port, and the request target.
public struct MediaURL: Sendable, Equatable {
    public var secure: Bool
    /// The host as written, without the brackets of an IPv6 literal.
    public var host: String
    public var port: Int
    /// The path and query (`/files/abc?x=1`), `/` when the URL has none.
    public var target: String

    /// Nil for anything but `http://` or `https://` with a host, an optional port, and no user info.
    public init?(_ text: String) {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else {
            return nil
        }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = rest[authorityEnd...]
        if let fragment = path.firstIndex(of: "#") { path = path[..<fragment] }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var hostPart = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        // RFC 3986's host: a bracketed IPv6 literal, or a name or IPv4 address of unreserved characters and
        // percent-escapes (an IDN is written in punycode); nothing that would read differently once rebuilt.
        let literal = authority.hasPrefix("[")
        guard !hostPart.isEmpty,
            hostPart.utf8.allSatisfy({ literal ? Self.isIPv6Character($0) : Self.isHostCharacter($0) })
        else { return nil }
        host = String(hostPart)
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        } else {
            port = secure ? 443 : 80
        }
        target = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
    }

    private static func isHostCharacter(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "%")
    }

    private static func isIPv6Character(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }

    /// The `Host` header's value.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Whether the host is an IP address (no server name is sent in TLS then).
    public var hostIsIPLiteral: Bool {
        host.contains(":") || host.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }
    }
}
