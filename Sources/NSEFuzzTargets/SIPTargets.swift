import NIOCore
import NSESIP

/// The SIP message parser, on a datagram and on a stream.
enum SIPTargets {
    /// One datagram; a message that parses must re-encode to bytes that parse to the same message.
    static func datagram(_ bytes: [UInt8]) throws(FuzzFinding) {
        let message: SIPMessage
        do { message = try SIPParser.parseDatagram(bytes) } catch {
            try FuzzCheck.oneLine(error.description, .sipDatagram, "a parse error")
            return
        }
        try roundTrip(message, .sipDatagram)
    }

    /// A stream split in two where the first two bytes say: the decoder must frame the same messages, and fail the
    /// same way, as when it gets the whole stream at once; each message must round-trip.
    static func stream(_ bytes: [UInt8]) throws(FuzzFinding) {
        guard bytes.count >= 2 else { return }
        let input = Array(bytes.dropFirst(2))
        let split = input.isEmpty ? 0 : (Int(bytes[0]) << 8 | Int(bytes[1])) % (input.count + 1)

        let whole = decode([input[...]])
        let parts = decode([input[..<split], input[split...]])
        guard whole.messages == parts.messages, whole.failed == parts.failed else {
            throw FuzzFinding(.sipStream, "the decoder frames a stream differently when it arrives in two parts")
        }
        for message in whole.messages { try roundTrip(message, .sipStream) }
    }

    /// Feeds the chunks to one decoder as a channel would, collecting messages until it needs more or fails.
    static func decode(_ chunks: [ArraySlice<UInt8>]) -> (messages: [SIPMessage], failed: Bool) {
        var decoder = SIPMessageDecoder()
        var buffer = ByteBuffer()
        var messages: [SIPMessage] = []
        for chunk in chunks {
            buffer.writeBytes(chunk)
            // Every decoded message consumes at least its start line, so the loop ends within count + 1 rounds.
            for _ in 0...chunk.count + buffer.readableBytes {
                do {
                    guard let message = try decoder.decodeMessage(&buffer) else { break }
                    messages.append(message)
                } catch {
                    return (messages, true)
                }
            }
        }
        return (messages, false)
    }

    /// Which part of two messages differs (header names only: a finding never quotes values), or nil.
    static func difference(_ a: SIPMessage, _ b: SIPMessage) -> String? {
        if a.startLine != b.startLine { return "the start line" }
        let (x, y) = (Array(a.headers), Array(b.headers))
        if x.count != y.count { return "\(x.count) header fields became \(y.count)" }
        for (index, (p, q)) in zip(x, y).enumerated() where p != q {
            return p.name == q.name ? "the value of header \(index + 1) (\(p.name))" : "the name of header \(index + 1)"
        }
        if a.body != b.body { return "the body" }
        return a == b ? nil : "the parsed start line"
    }

    static func withoutContentLength(_ message: SIPMessage) -> SIPMessage {
        switch message {
        case .request(var request):
            request.headers.remove("Content-Length")
            return .request(request)
        case .response(var response):
            response.headers.remove("Content-Length")
            return .response(response)
        }
    }

    /// Limits for re-reading a re-encoded message: re-encoding expands compact header names and adds a
    /// Content-Length, so a message at the default limits may be a little over them once written.
    static let roomyLimits = SIPParserLimits(
        maxMessageSize: 1 << 20, maxHeaderSectionSize: 1 << 18, maxBodySize: 1 << 20, maxHeaderCount: 1 << 10)

    static func roundTrip(_ message: SIPMessage, _ target: FuzzTarget) throws(FuzzFinding) {
        let wire = message.serialized()
        let again: SIPMessage
        do { again = try SIPParser.parseDatagram(wire, limits: roomyLimits) } catch {
            throw FuzzFinding(target, "a decoded message does not parse once re-encoded (\(error.description))")
        }
        // Re-encoding rewrites Content-Length (last, to the body's size); everything else must survive as it was.
        if let part = difference(withoutContentLength(message), withoutContentLength(again)) {
            throw FuzzFinding(target, "a decoded message parses to a different message once re-encoded (\(part))")
        }
        guard again.serialized() == wire else {
            throw FuzzFinding(target, "a re-encoded message re-encodes differently a second time")
        }
        var buffer = ByteBuffer(bytes: wire)
        var decoder = SIPMessageDecoder(limits: roomyLimits)
        let streamed: SIPMessage?
        do { streamed = try decoder.decodeMessage(&buffer) } catch {
            throw FuzzFinding(target, "a re-encoded message does not decode from a stream (\(error.description))")
        }
        guard streamed == again, buffer.readableBytes == 0 else {
            throw FuzzFinding(target, "a re-encoded message decodes from a stream to something else")
        }
    }
}
