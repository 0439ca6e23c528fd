public import NIOCore

/// A parsed SIP message: either a request or a response.
public enum SIPMessage: Sendable, Hashable {
    /// A request.
    case request(SIPRequest)
    /// A response.
    case response(SIPResponse)

    /// The header fields of the message.
    public var headers: SIPHeaders {
        switch self {
        case .request(let r): return r.headers
        case .response(let r): return r.headers
        }
    }

    /// The body bytes of the message (never log it).
    public var body: [UInt8] {
        switch self {
        case .request(let r): return r.body
        case .response(let r): return r.body
        }
    }

    /// The start line, e.g. `REGISTER sip:example.org SIP/2.0`.
    public var startLine: String {
        switch self {
        case .request(let r): return "\(r.method) \(r.uri) SIP/2.0"
        case .response(let r): return "SIP/2.0 \(r.statusCode) \(r.reasonPhrase)"
        }
    }

    /// Serializes to wire bytes; Content-Length is always rewritten to the body size.
    public func serialized() -> [UInt8] {
        let (start, body) = (startLine, self.body)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(wireSize(start: start, body: body))
        append(start: start, body: body) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Writes the wire form into a buffer.
    public func write(into buffer: inout ByteBuffer) {
        let (start, body) = (startLine, self.body)
        buffer.reserveCapacity(minimumWritableBytes: wireSize(start: start, body: body))
        append(start: start, body: body) { buffer.writeBytes($0) }
    }

    /// The wire form's size, at least (the Content-Length line's digits aside).
    private func wireSize(start: String, body: [UInt8]) -> Int {
        var size = start.utf8.count + 24 + body.count
        for field in headers { size += field.name.utf8.count + field.value.utf8.count + 4 }
        return size
    }

    /// Hands the wire form to `write` piece by piece: building it as a `String` made a temporary for every
    /// concatenation, most of the allocations a warm extension's push made.
    private func append(start: String, body: [UInt8], to write: (UnsafeRawBufferPointer) -> Void) {
        func text(_ string: String) {
            var string = string
            string.withUTF8 { write(UnsafeRawBufferPointer($0)) }
        }
        let separator: StaticString = ": "
        let lineEnd: StaticString = "\r\n"
        func bytes(_ literal: StaticString) {
            write(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }
        text(start)
        bytes(lineEnd)
        for field in headers where !SIPSyntax.equalsIgnoringCase(field.name, "Content-Length") {
            text(field.name)
            bytes(separator)
            text(field.value)
            bytes(lineEnd)
        }
        text("Content-Length: \(body.count)\r\n\r\n")
        body.withUnsafeBytes(write)
    }
}

extension SIPRequest {
    /// The wire bytes of this request.
    public func serialized() -> [UInt8] { SIPMessage.request(self).serialized() }
}

extension SIPResponse {
    /// The wire bytes of this response.
    public func serialized() -> [UInt8] { SIPMessage.response(self).serialized() }
}
