extension SIPHeaders {
    /// The Call-ID value.
    public var callID: String? { self["Call-ID"].map { SIPSyntax.trim($0) } }

    /// The parsed CSeq, or nil when absent or malformed.
    public var cseq: SIPCSeq? { self["CSeq"].flatMap { try? SIPCSeq(parsing: $0) } }

    /// The parsed From address.
    public var from: SIPNameAddress? { self["From"].flatMap { try? SIPNameAddress(parsing: $0) } }

    /// The parsed To address.
    public var to: SIPNameAddress? { self["To"].flatMap { try? SIPNameAddress(parsing: $0) } }

    /// All Via values in order (comma-joined values split), malformed ones skipped.
    public var vias: [SIPVia] { splitValues("Via").compactMap { try? SIPVia(parsing: $0) } }

    /// The topmost Via.
    public var topVia: SIPVia? {
        guard let first = splitValues("Via").first else { return nil }
        return try? SIPVia(parsing: first)
    }

    /// All Contact values (comma-joined values split); `*` is skipped.
    public var contacts: [SIPNameAddress] {
        splitValues("Contact").filter { $0 != "*" }.compactMap { try? SIPNameAddress(parsing: $0) }
    }

    /// The Content-Type value.
    public var contentType: String? { self["Content-Type"].map { SIPSyntax.trim($0) } }

    /// The numeric Content-Length, nil when absent or malformed.
    public var contentLength: Int? { self["Content-Length"].flatMap { SIPSyntax.parseInt(Substring($0)) } }

    /// The numeric Expires header.
    public var expires: Int? { self["Expires"].flatMap { SIPSyntax.parseInt(Substring($0)) } }
}
