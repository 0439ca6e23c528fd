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
        var text = startLine + "\r\n"
        for field in headers where !SIPSyntax.equalsIgnoringCase(field.name, "Content-Length") {
            text += field.name + ": " + field.value + "\r\n"
        }
        let body = self.body
        text += "Content-Length: \(body.count)\r\n\r\n"
        var bytes = Array(text.utf8)
        bytes.append(contentsOf: body)
        return bytes
    }

    /// Writes the wire form into a buffer.
    public func write(into buffer: inout ByteBuffer) {
        buffer.writeBytes(serialized())
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
