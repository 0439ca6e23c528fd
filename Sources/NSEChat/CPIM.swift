import NSESystem

/// A Common Presence and Instant Messaging message (RFC 3862, `message/cpim`), as Linphone wraps chat messages:
/// CPIM headers (with the IMDN namespace of RFC 5438), a blank line, MIME headers of the content, a blank line,
/// the content.
public struct CPIMMessage: Sendable, Equatable {
    /// The CPIM header block, in order (`From`, `To`, `DateTime`, `NS`, `imdn.Message-ID`, …).
    public var headers: [(name: String, value: String)]
    /// The content's MIME headers (`Content-Type`, `Content-Disposition`, …).
    public var contentHeaders: [(name: String, value: String)]
    public var body: [UInt8]

    public init(
        headers: [(name: String, value: String)], contentHeaders: [(name: String, value: String)], body: [UInt8]
    ) {
        self.headers = headers
        self.contentHeaders = contentHeaders
        self.body = body
    }

    public static func == (lhs: CPIMMessage, rhs: CPIMMessage) -> Bool {
        lhs.headers.elementsEqual(rhs.headers, by: ==) && lhs.contentHeaders.elementsEqual(rhs.contentHeaders, by: ==)
            && lhs.body == rhs.body
    }

    /// The first CPIM header with this name (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { ASCII.equalsIgnoringCase($0.name, name) }?.value
    }

    /// The first content header with this name (case-insensitive).
    public func contentHeader(_ name: String) -> String? {
        contentHeaders.first { ASCII.equalsIgnoringCase($0.name, name) }?.value
    }

    /// The inner content type, lowercased, without parameters.
    public var contentType: String {
        (contentHeader("Content-Type") ?? "text/plain").split(separator: ";").first.map {
            $0.trimmingCharacters().lowercased()
        } ?? "text/plain"
    }

    /// The IMDN Message-ID (`imdn.Message-ID`, whatever prefix the `NS` header gave the IMDN namespace).
    public var imdnMessageID: String? { imdnHeader("Message-ID") }

    /// The dispositions asked for (`positive-delivery`, `negative-delivery`, `display`).
    public var dispositionNotification: [String] {
        (imdnHeader("Disposition-Notification") ?? "").split(separator: ",").map {
            $0.trimmingCharacters().lowercased()
        }
        .filter { !$0.isEmpty }
    }

    /// A header in the IMDN namespace (`urn:ietf:params:imdn`) under whatever prefix `NS` declares.
    public func imdnHeader(_ name: String) -> String? {
        var prefix = "imdn"
        for header in headers
        where ASCII.equalsIgnoringCase(header.name, "ns") && header.value.contains("urn:ietf:params:imdn") {
            prefix = header.value.split(separator: "<").first.map { $0.trimmingCharacters() } ?? prefix
        }
        return header("\(prefix).\(name)")
    }

    /// Parses a `message/cpim` body; `nil` when it is not one.
    public init?(bytes: [UInt8]) {
        guard let (cpimHeaders, afterCPIM) = CPIMMessage.headerBlock(bytes, from: 0), !cpimHeaders.isEmpty,
            let (mimeHeaders, bodyStart) = CPIMMessage.headerBlock(bytes, from: afterCPIM)
        else { return nil }
        self.init(headers: cpimHeaders, contentHeaders: mimeHeaders, body: Array(bytes[bodyStart...]))
        if let length = contentHeader("Content-Length").flatMap({ Int($0) }), length >= 0, length < body.count {
            body = Array(body.prefix(length))
        }
    }

    /// The wire form.
    public var bytes: [UInt8] {
        let lines = (headers + contentHeaders).reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines + 4 + body.count)
        for block in [headers, contentHeaders] {
            for header in block {
                bytes.append(contentsOf: header.name.utf8)
                bytes.append(contentsOf: [0x3A, 0x20])
                bytes.append(contentsOf: header.value.utf8)
                bytes.append(contentsOf: [0x0D, 0x0A])
            }
            bytes.append(contentsOf: [0x0D, 0x0A])
        }
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Reads `Name: value` lines up to a blank line; returns them and the index after the blank line.
    static func headerBlock(_ bytes: [UInt8], from start: Int) -> ([(name: String, value: String)], Int)? {
        var headers: [(name: String, value: String)] = []
        // A message's usual few (From, To, DateTime, NS, the imdn ones) without growing 1, 2, 4, 8.
        headers.reserveCapacity(8)
        var index = start
        while index < bytes.count {
            var end = index
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            var line = bytes[index..<end]
            if line.last == 0x0D { line = line.dropLast() }
            index = min(end + 1, bytes.count)
            if line.isEmpty { return (headers, index) }
            guard let colon = line.firstIndex(of: 0x3A) else { return nil }
            let name = String(decoding: line[line.startIndex..<colon].trimmingSpace(), as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...].trimmingSpace(), as: UTF8.self)
            guard !name.isEmpty, !name.contains(" ") else { return nil }
            headers.append((name: name, value: value))
        }
        return (headers, index)
    }
}

extension BidirectionalCollection where Element == UInt8 {
    /// Without leading and trailing SP, HT, CR and LF. Byte by byte: a space followed by a combining mark is one
    /// `Character`, unequal to " ", and would survive a character trim, so a header written back would read
    /// differently; and a header's name and value are trimmed before their strings are made.
    func trimmingSpace() -> SubSequence {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

extension StringProtocol where UTF8View: BidirectionalCollection {
    /// Without leading and trailing SP, HT, CR and LF (`trimmingSpace()` of its UTF-8).
    func trimmingCharacters() -> String {
        let trimmed = utf8.trimmingSpace()
        return String(self[trimmed.startIndex..<trimmed.endIndex])
    }
}
