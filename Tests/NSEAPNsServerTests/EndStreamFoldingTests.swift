import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import NSEAPNsServer

/// The last frame of a response carries END_STREAM, as APNs sends it; no empty DATA frame after it.
@Suite struct EndStreamFoldingTests {
    func frames(_ writes: [HTTP2Frame.FramePayload]) throws -> [HTTP2Frame.FramePayload] {
        let channel = EmbeddedChannel(handler: EndStreamFolding())
        // Plain writes: `writeOutbound` waits for each write's promise, and a held frame's completes only with the next.
        for payload in writes {
            channel.write(payload, promise: nil)
            channel.flush()
        }
        var out: [HTTP2Frame.FramePayload] = []
        while let frame = try channel.readOutbound(as: HTTP2Frame.FramePayload.self) { out.append(frame) }
        _ = try channel.finish()
        return out
    }

    func describe(_ payload: HTTP2Frame.FramePayload) -> String {
        switch payload {
        case .headers(let headers): return "HEADERS\(headers.endStream ? "+END" : "")"
        case .data(let data): return "DATA(\(data.data.readableBytes))\(data.endStream ? "+END" : "")"
        default: return "other"
        }
    }

    let head = HTTP2Frame.FramePayload.headers(.init(headers: [":status": "200"]))
    func data(_ text: String, end: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(string: text)), endStream: end))
    }

    @Test func anEmptyResponseIsOneHeadersFrameWithEndStream() throws {
        #expect(try frames([head, data("", end: true)]).map(describe) == ["HEADERS+END"])
    }

    @Test func aBodyCarriesEndStreamOnItsLastDataFrame() throws {
        #expect(
            try frames([head, data(#"{"reason":"BadDeviceToken"}"#), data("", end: true)]).map(describe) == [
                "HEADERS", "DATA(27)+END",
            ])
        #expect(
            try frames([head, data("ab"), data("cd"), data("", end: true)]).map(describe) == [
                "HEADERS", "DATA(2)", "DATA(2)+END",
            ])
    }

    @Test func trailersAndNonEmptyEndsAreLeftAlone() throws {
        let trailers = HTTP2Frame.FramePayload.headers(.init(headers: ["x": "y"], endStream: true))
        #expect(try frames([head, data("ab"), trailers]).map(describe) == ["HEADERS", "DATA(2)", "HEADERS+END"])
        #expect(try frames([head, data("ab", end: true)]).map(describe) == ["HEADERS", "DATA(2)+END"])
    }

    @Test func eventStreamsPassStraightThrough() throws {
        let channel = EmbeddedChannel(handler: EndStreamFolding())
        channel.write(
            HTTP2Frame.FramePayload.headers(.init(headers: [":status": "200", "content-type": "text/event-stream"])),
            promise: nil)
        channel.write(data("id: 1\n\n"), promise: nil)
        channel.flush()
        // Both are out at once: an event never waits for the next one.
        var out: [String] = []
        while let frame = try channel.readOutbound(as: HTTP2Frame.FramePayload.self) { out.append(describe(frame)) }
        #expect(out == ["HEADERS", "DATA(7)"])
        _ = try channel.finish()
    }

    @Test func aHeldFrameIsWrittenBeforeClose() throws {
        let channel = EmbeddedChannel(handler: EndStreamFolding())
        channel.write(head, promise: nil)
        channel.flush()
        #expect(try channel.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
        _ = channel.close(mode: .all)
        #expect(try channel.readOutbound(as: HTTP2Frame.FramePayload.self).map(describe) == "HEADERS")
        // Runs the close's pending tasks, which take the handlers out (LeakSanitizer saw the pipeline's cycle).
        channel.embeddedEventLoop.run()
    }
}
