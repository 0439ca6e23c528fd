import NSEChat
import NSESystem

/// One element of a small XML document (a conference-info or resource-lists body): its local name, resolved
/// namespace, attributes, character data and children.
///
/// The reader is strict and bounded, for documents that come from the network and that an extension parses with a
/// few megabytes to live in: no DTD (so no entity expansion), no processing instruction but the XML declaration,
/// the five predefined entities and character references only, a size, depth and element count ceiling. Its errors
/// never quote the document.
public struct SIPXMLElement: Sendable, Equatable {
    /// The local name (without its prefix).
    public var name: String
    /// The namespace URI its prefix (or the default namespace) resolves to; nil when none is declared.
    public var namespace: String?
    /// Attributes by their name as written (`entity`, `xml:lang`), namespace declarations left out.
    public var attributes: [String: String]
    /// The element's own character data, entities decoded (children's text not included).
    public var text: String
    public var children: [SIPXMLElement]

    /// Creates an element.
    public init(
        name: String, namespace: String? = nil, attributes: [String: String] = [:], text: String = "",
        children: [SIPXMLElement] = []
    ) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.text = text
        self.children = children
    }

    /// The first child called `name` (local name).
    public func child(_ name: String) -> SIPXMLElement? { children.first { $0.name == name } }

    /// Every child called `name` (local name).
    public func children(_ name: String) -> [SIPXMLElement] { children.filter { $0.name == name } }

    /// How far the reader goes before refusing a document.
    public struct Limits: Sendable {
        /// Bytes of the whole document.
        public var maxBytes: Int
        /// Nesting depth.
        public var maxDepth: Int
        /// Elements in the document.
        public var maxElements: Int

        /// 64 KiB, 16 levels, 2,048 elements: a room of a few hundred participants fits.
        public static let `default` = Limits(maxBytes: 64 << 10, maxDepth: 16, maxElements: 2048)

        /// Creates limits.
        public init(maxBytes: Int, maxDepth: Int, maxElements: Int) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
            self.maxElements = maxElements
        }
    }

    /// Parses a document: an optional XML declaration, comments, one root element.
    public init(parsing bytes: [UInt8], limits: Limits = .default) throws(SIPError) {
        guard bytes.count <= limits.maxBytes else {
            throw SIPError(.messageTooLarge, "xml document larger than \(limits.maxBytes) bytes")
        }
        var reader = XMLReader(bytes: bytes, limits: limits)
        self = try reader.document()
    }

    /// The element as XML text: `prefix`-less, its namespace declared where it differs from its parent's.
    public func serialized(declaration: Bool = true) -> String {
        var out = declaration ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : ""
        write(into: &out, parentNamespace: nil)
        return out
    }

    private func write(into out: inout String, parentNamespace: String?) {
        out += "<" + name
        if let namespace, namespace != parentNamespace { out += " xmlns=\"\(XMLText.escape(namespace))\"" }
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            out += " \(key)=\"\(XMLText.escape(value))\""
        }
        if children.isEmpty && text.isEmpty {
            out += "/>"
            return
        }
        out += ">" + XMLText.escape(text)
        for child in children { child.write(into: &out, parentNamespace: namespace) }
        out += "</\(name)>"
    }
}

/// The reader behind ``SIPXMLElement/init(parsing:limits:)``: a byte cursor, one element per call.
private struct XMLReader {
    let bytes: [UInt8]
    let limits: SIPXMLElement.Limits
    var index = 0
    var elements = 0

    init(bytes: [UInt8], limits: SIPXMLElement.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    mutating func document() throws(SIPError) -> SIPXMLElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipSpace()
        if starts("<?xml") {
            guard let end = find("?>") else { throw malformed("unterminated xml declaration") }
            index = end + 2
        }
        try skipMisc()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { throw malformed("no root element") }
        let root = try element(depth: 1, namespaces: [:])
        try skipMisc()
        guard index == bytes.count else { throw malformed("content after the root element") }
        return root
    }

    /// Spaces and comments between elements; a DTD or processing instruction is refused.
    mutating func skipMisc() throws(SIPError) {
        while true {
            skipSpace()
            if starts("<!--") {
                guard let end = find("-->", from: index + 4) else { throw malformed("unterminated comment") }
                index = end + 3
            } else if starts("<!") {
                throw malformed("a DTD or CDATA section is not accepted")
            } else if starts("<?") {
                throw malformed("a processing instruction is not accepted")
            } else {
                return
            }
        }
    }

    mutating func element(depth: Int, namespaces: [String: String]) throws(SIPError) -> SIPXMLElement {
        guard depth <= limits.maxDepth else {
            throw SIPError(.messageTooLarge, "xml nesting deeper than \(limits.maxDepth)")
        }
        elements += 1
        guard elements <= limits.maxElements else {
            throw SIPError(.messageTooLarge, "xml document with more than \(limits.maxElements) elements")
        }
        index += 1  // "<"
        let qualified = try name()
        var raw: [(String, String)] = []
        var selfClosing = false
        while true {
            let spaced = skipSpace()
            guard index < bytes.count else { throw malformed("unterminated start tag") }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                break
            }
            if starts("/>") {
                index += 2
                selfClosing = true
                break
            }
            guard spaced else { throw malformed("attributes must be separated by spaces") }
            let key = try name()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw malformed("attribute without =") }
            index += 1
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw malformed("attribute value not quoted")
            }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote {
                if bytes[index] == UInt8(ascii: "<") { throw malformed("< in an attribute value") }
                index += 1
            }
            guard index < bytes.count else { throw malformed("unterminated attribute value") }
            let value = try decode(bytes[start..<index])
            index += 1
            guard !raw.contains(where: { $0.0 == key }) else { throw malformed("an attribute is given twice") }
            raw.append((key, value))
        }
        var scope = namespaces
        var attributes: [String: String] = [:]
        for (key, value) in raw {
            if key == "xmlns" {
                scope[""] = value
            } else if key.hasPrefix("xmlns:") {
                scope[String(key.dropFirst(6))] = value
            } else {
                attributes[key] = value
            }
        }
        let (prefix, local) = split(qualified)
        let namespace: String?
        if prefix.isEmpty {
            namespace = scope[""].flatMap { $0.isEmpty ? nil : $0 }
        } else {
            guard let declared = scope[prefix], !declared.isEmpty else {
                throw malformed("a namespace prefix is not declared")
            }
            namespace = declared
        }
        return try finish(
            SIPXMLElement(name: local, namespace: namespace, attributes: attributes), qualified: qualified,
            selfClosing: selfClosing, depth: depth, scope: scope)
    }

    private mutating func finish(
        _ start: SIPXMLElement, qualified: String, selfClosing: Bool, depth: Int, scope: [String: String]
    ) throws(SIPError) -> SIPXMLElement {
        var element = start
        guard !selfClosing else { return element }
        var text: [UInt8] = []
        while true {
            guard index < bytes.count else { throw malformed("an element is not closed") }
            if starts("</") {
                index += 2
                let closing = try name()
                skipSpace()
                guard closing == qualified, index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
                    throw malformed("an element is closed by another tag")
                }
                index += 1
                element.text = try decode(text[...])
                return element
            }
            if starts("<!--") {
                guard let end = find("-->", from: index + 4) else { throw malformed("unterminated comment") }
                index = end + 3
            } else if starts("<!") || starts("<?") {
                throw malformed("a CDATA section or processing instruction is not accepted")
            } else if bytes[index] == UInt8(ascii: "<") {
                element.children.append(try self.element(depth: depth + 1, namespaces: scope))
            } else {
                text.append(bytes[index])
                index += 1
            }
        }
    }

    /// An XML name: letters, digits, `-`, `_`, `.`, `:` and any non-ASCII byte, not starting with a digit.
    mutating func name() throws(SIPError) -> String {
        let start = index
        while index < bytes.count {
            let b = bytes[index]
            let isNameByte =
                (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2D
                || b == 0x5F || b == 0x2E || b == 0x3A || b >= 0x80
            guard isNameByte else { break }
            index += 1
        }
        guard index > start, !(bytes[start] >= 0x30 && bytes[start] <= 0x39), bytes[start] != 0x2D else {
            throw malformed("expected an xml name")
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Character data with entities and character references decoded; invalid UTF-8 is refused.
    func decode(_ slice: ArraySlice<UInt8>) throws(SIPError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(slice.count)
        var i = slice.startIndex
        while i < slice.endIndex {
            guard slice[i] == UInt8(ascii: "&") else {
                out.append(slice[i])
                i += 1
                continue
            }
            guard let semicolon = slice[i...].firstIndex(of: UInt8(ascii: ";")), semicolon - i <= 10 else {
                throw malformed("unterminated entity")
            }
            let entity = String(decoding: slice[(i + 1)..<semicolon], as: UTF8.self)
            switch entity {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                let value: UInt32?
                if entity.hasPrefix("#x") {
                    value = UInt32(entity.dropFirst(2), radix: 16)
                } else if entity.hasPrefix("#") {
                    value = UInt32(entity.dropFirst(1), radix: 10)
                } else {
                    value = nil
                }
                guard let value, value != 0, let scalar = Unicode.Scalar(value) else {
                    throw malformed("unknown entity")
                }
                out.append(contentsOf: Array(String(scalar).utf8))
            }
            i = semicolon + 1
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw malformed("text is not UTF-8") }
        return text
    }

    private func split(_ qualified: String) -> (prefix: String, local: String) {
        guard let colon = qualified.firstIndex(of: ":") else { return ("", qualified) }
        return (String(qualified[..<colon]), String(qualified[qualified.index(after: colon)...]))
    }

    @discardableResult
    mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index > start
    }

    func starts(_ text: String) -> Bool { bytes[index...].starts(with: text.utf8) }

    func find(_ text: String, from start: Int? = nil) -> Int? {
        let needle = Array(text.utf8)
        var i = start ?? index
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0], bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    func malformed(_ text: String) -> SIPError { SIPError(.malformedMessage, "xml: \(text)") }
}
