import NSESIP

extension SIPServerConfiguration {
    /// Parses `udp:127.0.0.1:5060`, `tcp:[::1]:0`, `tls:0.0.0.0:5061`.
    public static func parseListener(_ text: String) throws -> Listener {
        guard let colon = text.firstIndex(of: ":"),
            let kind = SIPTransportKind(token: String(text[text.startIndex..<colon]))
        else {
            throw SIPServerError("listener must look like udp|tcp|tls:HOST:PORT")
        }
        let rest = text[text.index(after: colon)...]
        let host: String
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw SIPServerError("unterminated IPv6 address in \(text)")
            }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw SIPServerError("missing port in \(text)") }
            portText = after.dropFirst()
        } else {
            guard let last = rest.lastIndex(of: ":") else { throw SIPServerError("missing port in \(text)") }
            host = String(rest[rest.startIndex..<last])
            portText = rest[rest.index(after: last)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw SIPServerError("invalid host or port in \(text)")
        }
        return Listener(transport: kind, host: host, port: port)
    }
}
