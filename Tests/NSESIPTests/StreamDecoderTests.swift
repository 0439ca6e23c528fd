import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@testable import NSESIP

@Suite struct StreamDecoderTests {
    static func message(_ callID: String, body: String) -> String {
        "MESSAGE sip:bob@example.org SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5060;branch=z9hG4bK\(callID)\r\ni: \(callID)\r\nCSeq: 1 MESSAGE\r\nl: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func decodeAll(_ chunks: [[UInt8]], limits: SIPParserLimits = .default) throws -> [SIPMessage] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(SIPMessageDecoder(limits: limits)))
        // Finished on every path (a refused stream throws from writeInbound): an unfinished channel stays in a cycle.
        defer { _ = try? channel.finish() }
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(bytes: chunk))
        }
        var out: [SIPMessage] = []
        while let m: SIPMessage = try channel.readInbound() { out.append(m) }
        return out
    }

    @Test func dripFedBytesProduceOneMessage() throws {
        let bytes = Array(Self.message("c1", body: "hello world").utf8)
        let out = try Self.decodeAll(bytes.map { [$0] })
        #expect(out.count == 1)
        #expect(out.first?.headers.callID == "c1")
        #expect(out.first?.body == Array("hello world".utf8))
    }

    @Test func pipelinedMessagesAndKeepAlives() throws {
        let text =
            "\r\n\r\n" + Self.message("c1", body: "a") + "\r\n\r\n" + Self.message("c2", body: "")
            + Self.message("c3", body: "ccc")
        let out = try Self.decodeAll([Array(text.utf8)])
        #expect(out.map { $0.headers.callID } == ["c1", "c2", "c3"])
        #expect(out.map { $0.body.count } == [1, 0, 3])
        // Split at awkward places (inside the header terminator and inside the body).
        let bytes = Array(text.utf8)
        let out2 = try Self.decodeAll([
            Array(bytes[0..<50]), Array(bytes[50..<131]), Array(bytes[131..<132]), Array(bytes[132...]),
        ])
        #expect(out2.map { $0.headers.callID } == ["c1", "c2", "c3"])
    }

    @Test func verifierAcceptsDecoder() throws {
        let inputs: [(ByteBuffer, [SIPMessage])] = try ["x1", "x2"].map { id in
            let text = Self.message(id, body: "body-\(id)")
            return (ByteBuffer(string: text), [try SIPParser.parse(text)])
        }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: inputs) { SIPMessageDecoder() }
    }

    @Test func rejectsOversizedHeaderSection() throws {
        let limits = SIPParserLimits(maxHeaderSectionSize: 256)
        let text = "MESSAGE sip:a@b SIP/2.0\r\nX-Pad: " + String(repeating: "p", count: 1000)
        expectSIPError(.messageTooLarge) { _ = try Self.decodeAll([Array(text.utf8)], limits: limits) }
    }

    @Test func rejectsOversizedBody() throws {
        let limits = SIPParserLimits(maxBodySize: 10)
        let text = "MESSAGE sip:a@b SIP/2.0\r\nContent-Length: 11\r\n\r\n"
        expectSIPError(.messageTooLarge) { _ = try Self.decodeAll([Array(text.utf8)], limits: limits) }
    }

    @Test func rejectsMalformedStream() throws {
        expectSIPError(.malformedMessage) { _ = try Self.decodeAll([Array("HELLO\r\n\r\n".utf8)]) }
    }

    @Test func encoderWritesWireForm() throws {
        let channel = EmbeddedChannel(handler: MessageToByteHandler(SIPMessageEncoder()))
        let message = try SIPParser.parse(Self.message("e1", body: "xyz"))
        try channel.writeOutbound(message)
        let out: ByteBuffer? = try channel.readOutbound()
        #expect(out.map { Array($0.readableBytesView) } == message.serialized())
        _ = try channel.finish()
    }
}
