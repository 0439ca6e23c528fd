import NSESIP
import Testing

/// `multipart/*` bodies (RFC 2046 §5.1) as SIP carries them: written and read back, and read as other stacks write
/// them (LF line breaks, a preamble, a quoted boundary).
@Suite struct MultipartTests {
    @Test func aBodyReadsBackAsWritten() throws {
        let sdp = Array("v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\n".utf8)
        let sealed = Array("nse1.abc-DEF_0".utf8)
        let written = SIPMultipart(parts: [
            .init(contentType: "application/sdp", body: sdp),
            .init(contentType: "application/vnd.nse.envelope", body: sealed),
        ]).serialized(boundary: "b1")
        #expect(written.contentType == "multipart/mixed;boundary=b1")
        let read = try #require(SIPMultipart(body: written.body, contentType: written.contentType))
        #expect(read.parts.map(\.mediaType) == ["application/sdp", "application/vnd.nse.envelope"])
        #expect(read.parts.map(\.body) == [sdp, sealed])
    }

    @Test func otherStacksFormsAreRead() throws {
        let body = Array(
            "preamble\n--\"x y\"\nContent-Type: Application/SDP; charset=x\n\nv=0\n--\"x y\"\ncontent-type: text/plain\n\nhi\n--\"x y\"--\nepilogue"
                .utf8)
        let read = try #require(SIPMultipart(body: body, contentType: "Multipart/Mixed; boundary=\"\\\"x y\\\"\""))
        #expect(read.parts.count == 2)
        #expect(read.parts.first?.mediaType == "application/sdp")
        #expect(read.parts.first?.header("content-type") == "Application/SDP; charset=x")
        #expect(read.parts.map(\.body) == [Array("v=0".utf8), Array("hi".utf8)])
    }

    @Test func whatIsNotAWholeMultipartBodyIsNil() {
        #expect(SIPMultipart(body: Array("v=0".utf8), contentType: "application/sdp") == nil)
        #expect(SIPMultipart(body: Array("--b\r\n\r\nx\r\n".utf8), contentType: "multipart/mixed;boundary=b") == nil)
        #expect(SIPMultipart(body: Array("--b--\r\n".utf8), contentType: "multipart/mixed;boundary=b") == nil)
        #expect(SIPMultipart(body: [], contentType: "multipart/mixed") == nil)
    }
}
