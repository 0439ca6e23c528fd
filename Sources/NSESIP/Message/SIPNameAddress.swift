/// A name-addr or addr-spec with header parameters, as in From, To and Contact (RFC 3261 §20.10).
public struct SIPNameAddress: Sendable, Hashable, CustomStringConvertible {
    /// The display name (unquoted), if any.
    public var displayName: String?
    /// The URI inside `<...>` (or the bare addr-spec).
    public var uri: SIPURI
    /// Header parameters after the URI (tag, expires, +sip.instance, ...), values as written.
    public var parameters: [SIPParameter]

    /// Creates a name address.
    public init(displayName: String? = nil, uri: SIPURI, parameters: [SIPParameter] = []) {
        self.displayName = displayName
        self.uri = uri
        self.parameters = parameters
    }

    /// Parses `"Bob" <sip:bob@example.org>;tag=1`, `<sip:...>;expires=60` or `sip:bob@example.org;tag=1`.
    public init(parsing text: String) throws(SIPError) {
        var t = SIPSyntax.trim(Substring(text))
        guard !t.isEmpty else { throw .malformed("empty address") }
        var display: String? = nil
        if t.utf8.first == 0x22 {
            // quoted display name
            var escaped = false
            var end: Substring.Index? = nil
            var i = t.utf8.index(after: t.startIndex)
            while i < t.endIndex {
                let b = t.utf8[i]
                if escaped {
                    escaped = false
                } else if b == 0x5C {
                    escaped = true
                } else if b == 0x22 {
                    end = i
                    break
                }
                i = t.utf8.index(after: i)
            }
            guard let end else { throw .malformed("unterminated display name") }
            display = SIPSyntax.unquote(t[t.startIndex...end])
            t = SIPSyntax.trim(t[t.utf8.index(after: end)...])
            guard t.utf8.first == 0x3C else { throw .malformed("display name not followed by <URI>") }
        }
        if let lt = t.utf8.firstIndex(of: 0x3C) {
            if display == nil {
                let d = SIPSyntax.trim(t[t.startIndex..<lt])
                display = d.isEmpty ? nil : String(d)
            }
            guard let gt = t.utf8[lt...].firstIndex(of: 0x3E) else { throw .malformed("unterminated <URI>") }
            uri = try SIPURI(parsing: String(t[t.utf8.index(after: lt)..<gt]))
            parameters = try SIPSyntax.parseParameters(t[t.utf8.index(after: gt)...])
        } else {
            if let semi = t.utf8.firstIndex(of: 0x3B) {
                uri = try SIPURI(parsing: String(t[t.startIndex..<semi]))
                parameters = try SIPSyntax.parseParameters(t[semi...])
            } else {
                uri = try SIPURI(parsing: String(t))
                parameters = []
            }
        }
        displayName = display
    }

    /// The `tag` parameter, if any.
    public var tag: String? {
        get { parameters.value(of: "tag") }
        set { if let newValue { parameters.set("tag", newValue) } else { parameters.remove(parameter: "tag") } }
    }

    /// The `expires` parameter, if numeric.
    public var expires: Int? {
        parameters.value(of: "expires").flatMap { SIPSyntax.parseInt(Substring($0)) }
    }

    /// The wire form, always using `<...>`.
    public var description: String {
        var text = ""
        text.reserveCapacity(uri.wireSize + parameters.wireSize + 3 + (displayName?.utf8.count ?? 0) * 2)
        if let displayName, !displayName.isEmpty {
            text.append(SIPSyntax.quote(displayName))
            text.append(" ")
        }
        text.append("<")
        uri.appendWireForm(to: &text)
        text.append(">")
        parameters.appendWireForm(to: &text)
        return text
    }
}
