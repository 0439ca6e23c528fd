/// One Via header field value (RFC 3261 §20.42, RFC 3581 rport).
public struct SIPVia: Sendable, Hashable, CustomStringConvertible {
    /// The transport token, uppercased (`UDP`, `TCP`, `TLS`).
    public var transport: String
    /// The sent-by host, IPv6 without brackets.
    public var host: String
    /// The sent-by port, if present.
    public var port: Int?
    /// Via parameters in order (branch, rport, received, ...).
    public var parameters: [SIPParameter]

    /// Creates a Via value.
    public init(transport: String, host: String, port: Int?, parameters: [SIPParameter] = []) {
        self.transport = transport.uppercased()
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    /// Parses `SIP/2.0/UDP host:port;branch=z9hG4bK...;rport`.
    public init(parsing text: String) throws(SIPError) {
        let t = SIPSyntax.trim(Substring(text))
        var head = t
        var paramPart: Substring = ""
        if let semi = SIPSyntax.firstTopLevel(t, 0x3B) {
            head = t[t.startIndex..<semi]
            paramPart = t[semi...]
        }
        // sent-protocol: three tokens separated by "/" with optional LWS around the slashes.
        let slashParts = SIPSyntax.split(head, at: 0x2F, maxSplits: 2, omittingEmptySubsequences: false)
        guard slashParts.count == 3 else { throw .malformed("invalid Via sent-protocol") }
        guard SIPSyntax.equalsIgnoringCase(SIPSyntax.trim(slashParts[0]), "SIP"),
            SIPSyntax.trim(slashParts[1]) == "2.0"
        else { throw .malformed("unsupported Via protocol") }
        let last = SIPSyntax.trim(slashParts[2])
        guard let space = last.utf8.firstIndex(where: { $0 == 0x20 || $0 == 0x09 }) else {
            throw .malformed("Via has no sent-by")
        }
        let transportToken = last[last.startIndex..<space]
        guard SIPSyntax.isToken(transportToken) else { throw .malformed("invalid Via transport") }
        transport = String(transportToken).uppercased()
        let hp = try SIPSyntax.parseHostPort(last[space...])
        host = hp.host
        port = hp.port
        parameters = try SIPSyntax.parseParameters(paramPart)
    }

    /// The `branch` parameter, if any.
    public var branch: String? { parameters.value(of: "branch") }
    /// The `received` parameter, if any.
    public var received: String? { parameters.value(of: "received") }
    /// True when an `rport` parameter is present (with or without a value).
    public var hasRport: Bool { parameters.contains(parameter: "rport") }
    /// The numeric value of `rport`, if the server filled it in.
    public var rport: Int? { parameters.value(of: "rport").flatMap { SIPSyntax.parseInt(Substring($0), max: 65535) } }

    /// The wire form of the Via value.
    public var description: String {
        var s = "SIP/2.0/\(transport) \(SIPSyntax.formatHost(host))"
        if let port { s += ":\(port)" }
        return s + parameters.wireForm
    }
}
