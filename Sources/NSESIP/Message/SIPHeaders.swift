import NSESystem

/// An ordered list of SIP header fields with case-insensitive names and compact-form expansion.
public struct SIPHeaders: Sendable, Hashable, Sequence {
    /// One header field as stored.
    public struct Field: Sendable, Hashable {
        /// The canonical name (compact forms expanded).
        public var name: String
        /// The raw value (folded lines joined with a space).
        public var value: String
    }

    private var fields: [Field] = []

    /// Creates an empty header list.
    public init() {}

    /// Creates a header list from (name, value) pairs.
    public init(_ pairs: [(String, String)]) {
        for (n, v) in pairs { add(n, v) }
    }

    /// Number of stored fields.
    public var count: Int { fields.count }

    /// Iterates over the fields in wire order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Room for `count` fields without growing (the parser knows its line count).
    mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Appends a field (the name is canonicalized, compact forms expanded).
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: SIPHeaders.canonicalName(name), value: value))
    }

    /// Replaces every field of this name with a single one at the first position (or at the end).
    public mutating func set(_ name: String, _ value: String) {
        let canonical = SIPHeaders.canonicalName(name)
        if let i = fields.firstIndex(where: { SIPSyntax.equalsIgnoringCase($0.name, canonical) }) {
            fields[i].value = value
            var j = fields.index(after: i)
            while j < fields.endIndex {
                if SIPSyntax.equalsIgnoringCase(fields[j].name, canonical) { fields.remove(at: j) } else { j += 1 }
            }
        } else {
            fields.append(Field(name: canonical, value: value))
        }
    }

    /// Inserts a field before all others (used for Via).
    public mutating func prepend(_ name: String, _ value: String) {
        fields.insert(Field(name: SIPHeaders.canonicalName(name), value: value), at: 0)
    }

    /// Removes every field of this name.
    public mutating func remove(_ name: String) {
        let canonical = SIPHeaders.canonicalName(name)
        fields.removeAll { SIPSyntax.equalsIgnoringCase($0.name, canonical) }
    }

    /// The first value of this name (compact names accepted), or nil.
    public subscript(name: String) -> String? {
        let canonical = SIPHeaders.canonicalName(name)
        return fields.first { SIPSyntax.equalsIgnoringCase($0.name, canonical) }?.value
    }

    /// All raw values of this name, one per header line.
    public func values(_ name: String) -> [String] {
        let canonical = SIPHeaders.canonicalName(name)
        var values: [String] = []
        for field in fields where SIPSyntax.equalsIgnoringCase(field.name, canonical) { values.append(field.value) }
        return values
    }

    /// All values of this name, comma-joined lists split outside quotes and `<...>`.
    public func splitValues(_ name: String) -> [String] {
        let canonical = SIPHeaders.canonicalName(name)
        var out: [String] = []
        for field in fields where SIPSyntax.equalsIgnoringCase(field.name, canonical) {
            SIPSyntax.forEachTopLevel(Substring(field.value), separator: 0x2C) { part in
                let trimmed = SIPSyntax.trim(part)
                if !trimmed.isEmpty { out.append(String(trimmed)) }
            }
        }
        return out
    }

    /// True when a field of this name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// The name of the first field whose value holds a control character RFC 3261's grammar forbids (NUL, CR, LF,
    /// ESC, DEL, … anything below 0x20 but HTAB, and 0x7F), or nil when every value is clean. The parser keeps such
    /// values as received so that a server can answer 400 naming the header; nothing should store or forward them.
    /// (Bodies are bytes and may hold anything.)
    public var firstInvalidField: String? {
        fields.first { field in field.value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F } }?.name
    }

    static let compactForms: [UInt8: String] = [
        UInt8(ascii: "i"): "Call-ID", UInt8(ascii: "m"): "Contact", UInt8(ascii: "e"): "Content-Encoding",
        UInt8(ascii: "l"): "Content-Length", UInt8(ascii: "c"): "Content-Type", UInt8(ascii: "f"): "From",
        UInt8(ascii: "s"): "Subject", UInt8(ascii: "k"): "Supported", UInt8(ascii: "t"): "To",
        UInt8(ascii: "v"): "Via", UInt8(ascii: "o"): "Event", UInt8(ascii: "u"): "Allow-Events",
        UInt8(ascii: "r"): "Refer-To", UInt8(ascii: "x"): "Session-Expires", UInt8(ascii: "b"): "Referred-By",
    ]

    static let knownNames: [String: String] = {
        let names = [
            "Accept", "Accept-Encoding", "Accept-Language", "Alert-Info", "Allow", "Allow-Events",
            "Authentication-Info", "Authorization", "Call-ID", "Call-Info", "Contact", "Content-Disposition",
            "Content-Encoding", "Content-Language", "Content-Length", "Content-Type", "CSeq", "Date",
            "Error-Info", "Event", "Expires", "From", "In-Reply-To", "Max-Forwards", "Min-Expires",
            "MIME-Version", "Organization", "Path", "Priority", "Proxy-Authenticate", "Proxy-Authorization",
            "Proxy-Require", "Record-Route", "Refer-To", "Referred-By", "Reply-To", "Require", "Retry-After",
            "Route", "Server", "Service-Route", "Session-Expires", "Subject", "Supported", "Timestamp", "To",
            "Unsupported", "User-Agent", "Via", "Warning", "WWW-Authenticate", "Subscription-State",
        ]
        var map: [String: String] = [:]
        for n in names { map[ASCII.lowercased(n)] = n }
        return map
    }()

    /// Expands compact forms and normalizes the case of well-known names.
    public static func canonicalName(_ name: String) -> String {
        let utf8 = name.utf8
        if utf8.count == 1, let b = utf8.first {
            if let full = compactForms[ASCII.lowercased(b)] { return full }
        }
        // Already canonical (what nse writes, what most peers send): no lower-cased copy to look it up with.
        if canonicalNames.contains(name) { return name }
        return knownNames[ASCII.lowercased(name)] ?? name
    }

    /// The canonical spellings of ``knownNames``.
    static let canonicalNames = Set(knownNames.values)
}
