/// Parses SIP messages from datagrams or header sections.
public enum SIPParser {
    /// The start line and headers of a message, before the body is attached.
    struct Head {
        enum StartLine {
            case request(method: String, uri: SIPURI)
            case response(code: Int, reason: String)
        }
        var startLine: StartLine
        var headers: SIPHeaders

        func message(body: [UInt8]) -> SIPMessage {
            switch startLine {
            case .request(let method, let uri):
                return .request(SIPRequest(method: method, uri: uri, headers: headers, body: body))
            case .response(let code, let reason):
                return .response(SIPResponse(statusCode: code, reasonPhrase: reason, headers: headers, body: body))
            }
        }
    }

    /// Parses a message from a string (convenience for tests and tools; same rules as datagrams).
    public static func parse(_ text: String, limits: SIPParserLimits = .default) throws(SIPError) -> SIPMessage {
        try parseDatagram(Array(text.utf8), limits: limits)
    }

    /// Parses one UDP datagram as one message; bytes after Content-Length are ignored, a missing Content-Length means "rest of datagram".
    public static func parseDatagram(_ bytes: [UInt8], limits: SIPParserLimits = .default) throws(SIPError)
        -> SIPMessage
    {
        guard bytes.count <= limits.maxMessageSize else {
            throw .tooLarge("datagram of \(bytes.count) bytes exceeds the \(limits.maxMessageSize)-byte message limit")
        }
        var start = 0
        while start < bytes.count, bytes[start] == 0x0D || bytes[start] == 0x0A { start += 1 }
        guard start < bytes.count else { throw .malformed("empty message") }
        let end: (headEnd: Int, bodyStart: Int)? = bytes.withUnsafeBytes { raw in
            findHeaderEnd(UnsafeRawBufferPointer(rebasing: raw[start...]), limit: limits.maxHeaderSectionSize)
        }
        guard let end else {
            if bytes.count - start > limits.maxHeaderSectionSize {
                throw .tooLarge("header section exceeds the \(limits.maxHeaderSectionSize)-byte limit")
            }
            throw .malformed("header section not terminated by an empty line")
        }
        let head = try parseHead(bytes[start..<(start + end.headEnd)], limits: limits)
        let bodyStart = start + end.bodyStart
        let available = bytes.count - bodyStart
        let body: [UInt8]
        if let lengthText = head.headers["Content-Length"] {
            guard let length = SIPSyntax.parseInt(Substring(lengthText)) else {
                throw .malformed("invalid Content-Length")
            }
            guard length <= limits.maxBodySize else {
                throw .tooLarge("Content-Length \(length) exceeds the \(limits.maxBodySize)-byte body limit")
            }
            guard length <= available else { throw .malformed("Content-Length larger than the datagram body") }
            body = Array(bytes[bodyStart..<(bodyStart + length)])
        } else {
            guard available <= limits.maxBodySize else {
                throw .tooLarge("body exceeds the \(limits.maxBodySize)-byte body limit")
            }
            body = Array(bytes[bodyStart...])
        }
        return head.message(body: body)
    }

    /// Finds the empty line ending the header section: returns the offset where it starts and where the body starts.
    static func findHeaderEnd(_ raw: UnsafeRawBufferPointer, limit: Int) -> (headEnd: Int, bodyStart: Int)? {
        let n = Swift.min(raw.count, limit + 4)
        var i = 0
        while i < n {
            if raw[i] == 0x0A {
                // Line ends at i. Next line empty?
                if i + 1 < raw.count, raw[i + 1] == 0x0A { return i + 1 > limit ? nil : (i + 1, i + 2) }
                if i + 2 < raw.count, raw[i + 1] == 0x0D, raw[i + 2] == 0x0A {
                    return i + 1 > limit ? nil : (i + 1, i + 3)
                }
            }
            i += 1
        }
        return nil
    }

    /// Parses the start line and header lines (folded lines joined). Header values are kept as received, control
    /// characters included, so that a server can still answer such a request (400 naming the header, see
    /// `SIPHeaders.firstInvalidField`) and the stream stays framed; bodies are bytes and may hold anything.
    static func parseHead(_ bytes: ArraySlice<UInt8>, limits: SIPParserLimits) throws(SIPError) -> Head {
        guard bytes.count <= limits.maxHeaderSectionSize else {
            throw .tooLarge("header section exceeds the \(limits.maxHeaderSectionSize)-byte limit")
        }
        // One string for the whole section, its lines slices of it (a string per line was an allocation per header
        // line), split on LF at the byte level ("\r\n" is a single Character in Swift strings) in the string's own
        // contiguous UTF-8. Repairing bad UTF-8 keeps every CR and LF where it was, so the lines are those of the bytes.
        var text = String(decoding: bytes, as: UTF8.self)
        let bounds = text.withUTF8 { utf8 in
            // Sized first: grown line by line, the array was five allocations for a dozen headers.
            var lineCount = 1
            for byte in utf8 where byte == 0x0A { lineCount += 1 }
            var bounds: [(start: Int, end: Int)] = []
            bounds.reserveCapacity(lineCount)
            var lineStart = 0
            for offset in 0...utf8.count where offset == utf8.count || utf8[offset] == 0x0A {
                var lineEnd = offset
                if lineEnd > lineStart, utf8[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                bounds.append((lineStart, lineEnd))
                lineStart = offset + 1
            }
            return bounds
        }
        let view = text.utf8
        var lines = bounds.map { bound in
            text[view.index(view.startIndex, offsetBy: bound.start)..<view.index(view.startIndex, offsetBy: bound.end)]
        }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        guard let first = lines.first else { throw .malformed("missing start line") }
        let startLine = try parseStartLine(first)
        var headers = SIPHeaders()
        headers.reserveCapacity(lines.count - 1)
        var pendingName: String? = nil
        var pendingValue = ""
        var count = 0
        for line in lines.dropFirst() {
            if let b = line.utf8.first, b == 0x20 || b == 0x09 {
                guard pendingName != nil else { throw .malformed("continuation line before any header") }
                // A value that starts on the continuation line (`CSeq:` CRLF SP `1 MESSAGE`) has no leading space.
                let continuation = SIPSyntax.trim(line)
                if continuation.isEmpty { continue }
                if pendingValue.isEmpty {
                    pendingValue = String(continuation)
                } else {
                    pendingValue += " " + continuation
                }
                continue
            }
            if let name = pendingName { headers.add(name, pendingValue) }
            guard let colon = line.utf8.firstIndex(of: 0x3A) else { throw .malformed("header line without colon") }
            let name = SIPSyntax.trim(line[line.startIndex..<colon])
            guard SIPSyntax.isToken(name) else { throw .malformed("invalid header name") }
            count += 1
            guard count <= limits.maxHeaderCount else {
                throw .tooLarge("more than \(limits.maxHeaderCount) header lines")
            }
            pendingName = String(name)
            pendingValue = String(SIPSyntax.trim(line[line.utf8.index(after: colon)...]))
        }
        if let name = pendingName { headers.add(name, pendingValue) }
        return Head(startLine: startLine, headers: headers)
    }

    /// Parses a request or status line. A control character anywhere in it (NUL, ESC, a bare CR, DEL…) makes the
    /// message malformed: unlike a header value, a start line cannot be refused with a response that names the
    /// faulty part, and a Request-URI or reason phrase carrying one would be stored and echoed.
    static func parseStartLine(_ line: Substring) throws(SIPError) -> Head.StartLine {
        if line.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            throw .malformed("control character in the start line")
        }
        if line.hasPrefix("SIP/") || line.hasPrefix("sip/") {
            let parts = SIPSyntax.split(line, at: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, SIPSyntax.equalsIgnoringCase(parts[0], "SIP/2.0") else {
                throw .malformed("invalid status line")
            }
            guard parts[1].utf8.count == 3, let code = SIPSyntax.parseInt(parts[1]), (100...699).contains(code) else {
                throw .malformed("invalid status code")
            }
            let reason = parts.count == 3 ? String(parts[2]) : ""
            return .response(code: code, reason: reason)
        }
        let parts = SIPSyntax.split(line, at: 0x20)
        guard parts.count == 3 else { throw .malformed("invalid request line") }
        guard SIPSyntax.isToken(parts[0]) else { throw .malformed("invalid method") }
        guard SIPSyntax.equalsIgnoringCase(parts[2], "SIP/2.0") else { throw .malformed("unsupported SIP version") }
        // A reason phrase may hold a tab; a Request-URI may not (RFC 3261 §25.1: it would have to be escaped). One
        // at its end would be trimmed once written again, and the message would not read back the same.
        guard !parts[1].utf8.contains(0x09) else { throw .malformed("tab in the Request-URI") }
        let uri = try SIPURI(parsing: String(parts[1]))
        return .request(method: String(parts[0]), uri: uri)
    }
}
