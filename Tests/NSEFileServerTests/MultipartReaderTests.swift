import Testing

@testable import NSEFileServer

/// A form read whole, byte by byte and in uneven chunks gives the same parts: a boundary split across chunks is
/// found, and content that looks almost like one is kept.
@Suite struct MultipartReaderTests {
    static let boundary = "----nse-Boundary7MA4YWxkTrZu0gW"
    static let fileBytes: [UInt8] =
        Array("abc\r\n--not-the-boundary\r\n\r\n----nse-Boundary7MA4".utf8) + [0, 13, 10, 255]

    static var form: [UInt8] {
        var body = Array("preamble to ignore\r\n".utf8)
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n".utf8)
        body += Array(
            "--\(boundary)  \r\nContent-Disposition: form-data; name=\"File\"; filename=\"a \\\"b\\\".enc\"\r\n".utf8)
        body += Array("Content-Type: application/octet-stream\r\n\r\n".utf8)
        body += fileBytes
        body += Array("\r\n--\(boundary)--\r\nepilogue".utf8)
        return body
    }

    /// The parts read from `chunks`: their headers and content.
    static func read(_ chunks: [[UInt8]]) throws -> [(PartHeaders, [UInt8])] {
        var reader = MultipartReader(boundary: boundary)
        var parts: [(PartHeaders, [UInt8])] = []
        for chunk in chunks {
            for event in try reader.feed(chunk) {
                switch event {
                case .partBegan(let headers): parts.append((headers, []))
                case .content(let bytes): parts[parts.count - 1].1 += bytes
                case .partEnded: break
                }
            }
        }
        try reader.finish()
        return parts
    }

    @Test(arguments: [1, 2, 3, 7, 31, 64, 1000])
    func aFormInChunksOf(_ size: Int) throws {
        let form = Self.form
        let chunks = stride(from: 0, to: form.count, by: size).map { Array(form[$0..<min($0 + size, form.count)]) }
        let parts = try Self.read(chunks)
        #expect(parts.count == 2)
        #expect(parts[0].0 == PartHeaders(name: "note"))
        #expect(parts[0].1 == Array("hello".utf8))
        #expect(
            parts[1].0 == PartHeaders(name: "File", filename: "a \"b\".enc", contentType: "application/octet-stream"))
        #expect(parts[1].0.isFile)
        #expect(parts[1].1 == Self.fileBytes)
    }

    @Test func aFormThatStartsWithItsBoundaryAndAPartWithoutHeaders() throws {
        let body = Array("--\(Self.boundary)\r\n\r\nraw\r\n--\(Self.boundary)--".utf8)
        let parts = try Self.read([body])
        #expect(parts.count == 1 && parts[0].0 == PartHeaders() && parts[0].1 == Array("raw".utf8))
    }

    @Test func malformedForms() throws {
        // No closing boundary.
        #expect(throws: MultipartReader.Malformed.self) {
            try Self.read([Array("--\(Self.boundary)\r\n\r\nraw".utf8)])
        }
        // No boundary at all.
        #expect(throws: MultipartReader.Malformed.self) { try Self.read([Array("just bytes".utf8)]) }
        // Text after a boundary on its line.
        #expect(throws: MultipartReader.Malformed.self) {
            try Self.read([Array("--\(Self.boundary)x\r\n\r\n".utf8)])
        }
        // Headers that never end.
        #expect(throws: MultipartReader.Malformed.self) {
            try Self.read([Array("--\(Self.boundary)\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: 20_000)])
        }
    }

    @Test func theUploadFormFromContentType() throws {
        #expect(try UploadForm(contentType: nil) == .raw)
        #expect(try UploadForm(contentType: "application/octet-stream") == .raw)
        #expect(try UploadForm(contentType: "multipart/form-data; boundary=abc") == .multipart(boundary: "abc"))
        #expect(
            try UploadForm(contentType: "Multipart/Form-Data; charset=utf-8; BOUNDARY=\"a b;c\"")
                == .multipart(boundary: "a b;c"))
        #expect(throws: UploadForm.Invalid.self) { try UploadForm(contentType: "multipart/form-data") }
        #expect(throws: UploadForm.Invalid.self) {
            try UploadForm(contentType: "multipart/form-data; boundary=" + String(repeating: "x", count: 71))
        }
    }
}
