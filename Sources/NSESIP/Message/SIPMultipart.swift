import NSESystem

/// A `multipart/*` message body (RFC 2046 §5.1, as SIP carries one: RFC 5621): its parts, each with its own
/// headers and bytes, between the delimiter lines `--BOUNDARY` and the closing `--BOUNDARY--`.
public struct SIPMultipart: Sendable, Equatable {
    /// One body part.
    public struct Part: Sendable, Equatable {
        /// The part's own header fields (`Content-Type` first of all).
        public var headers: [(name: String, value: String)]
        /// The part's bytes, without the line break that ends them before the next delimiter.
        public var body: [UInt8]

        public init(contentType: String, body: [UInt8]) {
            self.headers = [("Content-Type", contentType)]
            self.body = body
        }

        init(headers: [(name: String, value: String)], body: [UInt8]) {
            self.headers = headers
            self.body = body
        }

        /// The value of the first header field of this name (case-insensitive), trimmed.
        public func header(_ name: String) -> String? {
            headers.first { ASCII.lowercased($0.name) == ASCII.lowercased(name) }
                .map { String(SIPSyntax.trim(Substring($0.value))) }
        }

        /// The part's media type, lowercased and without parameters (`application/sdp`).
        public var mediaType: String? { header("Content-Type").map(SIPMultipart.mediaType(of:)) }

        public static func == (a: Part, b: Part) -> Bool {
            a.body == b.body && a.headers.map(\.name) == b.headers.map(\.name)
                && a.headers.map(\.value) == b.headers.map(\.value)
        }
    }

    /// The parts, in order.
    public var parts: [Part]

    public init(parts: [Part]) {
        self.parts = parts
    }

    /// Reads a body whose `Content-Type` is `multipart/…` with a `boundary` parameter; nil for any other type, a
    /// body without its closing delimiter, or one with no part.
    public init?(body: [UInt8], contentType: String) {
        let (type, parameters) = Self.split(contentType)
        guard type.hasPrefix("multipart/"),
            let boundary = parameters.first(where: { ASCII.lowercased($0.name) == "boundary" })?.value,
            !boundary.isEmpty
        else { return nil }
        let marker = Array("--\(SIPSyntax.unquote(Substring(boundary)))".utf8)
        var delimiters: [(start: Int, end: Int, closing: Bool)] = []
        var i = 0
        while i + marker.count <= body.count {
            if i == 0 || body[i - 1] == 0x0A, body[i..<(i + marker.count)].elementsEqual(marker) {
                let after = i + marker.count
                let closing = after + 1 < body.count && body[after] == 0x2D && body[after + 1] == 0x2D
                var end = after
                while end < body.count, body[end] != 0x0A { end += 1 }
                delimiters.append((i, min(end + 1, body.count), closing))
                if closing { break }
                i = end
            } else {
                i += 1
            }
        }
        guard let last = delimiters.last, last.closing, delimiters.count >= 2 else { return nil }
        var parts: [Part] = []
        for (open, next) in zip(delimiters, delimiters.dropFirst()) {
            // The line break before a delimiter belongs to the delimiter (RFC 2046 §5.1.1).
            var stop = next.start
            if stop > open.end, body[stop - 1] == 0x0A { stop -= 1 }
            if stop > open.end, body[stop - 1] == 0x0D { stop -= 1 }
            parts.append(Self.part(Array(body[open.end..<max(open.end, stop)])))
        }
        self.parts = parts
    }

    /// The body and its `Content-Type` (with `boundary`), ready to send.
    public func serialized(boundary: String, subtype: String = "mixed") -> (contentType: String, body: [UInt8]) {
        var body: [UInt8] = []
        for part in parts {
            body += Array("--\(boundary)\r\n".utf8)
            for (name, value) in part.headers { body += Array("\(name): \(value)\r\n".utf8) }
            body += Array("\r\n".utf8)
            body += part.body
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return ("multipart/\(subtype);boundary=\(boundary)", body)
    }

    /// The media type of a `Content-Type` value: lowercased, parameters dropped.
    public static func mediaType(of contentType: String) -> String { split(contentType).type }

    private static func split(_ contentType: String) -> (type: String, parameters: [SIPParameter]) {
        let text = Substring(contentType)
        guard let semicolon = text.utf8.firstIndex(of: 0x3B) else {
            return (ASCII.lowercased(SIPSyntax.trim(text)), [])
        }
        let type = ASCII.lowercased(SIPSyntax.trim(text[text.startIndex..<semicolon]))
        return (type, (try? SIPSyntax.parseParameters(text[semicolon...])) ?? [])
    }

    /// A part's header fields (up to the first empty line) and its bytes.
    private static func part(_ bytes: [UInt8]) -> Part {
        var headers: [(name: String, value: String)] = []
        var i = 0
        while i < bytes.count {
            var end = i
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            var line = bytes[i..<end]
            if line.last == 0x0D { line = line.dropLast() }
            i = min(end + 1, bytes.count)
            if line.isEmpty { return Part(headers: headers, body: Array(bytes[i...])) }
            guard let colon = line.firstIndex(of: 0x3A) else { continue }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self)
            headers.append((String(SIPSyntax.trim(Substring(name))), String(SIPSyntax.trim(Substring(value)))))
        }
        // No empty line: the part is all headers and no body (RFC 2046 allows a part without headers only when
        // it starts with the empty line).
        return Part(headers: headers, body: [])
    }
}
