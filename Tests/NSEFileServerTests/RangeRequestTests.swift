import Testing

@testable import NSEFileServer

/// `Range` as RFC 9110 §14 reads it, for a file of 1000 bytes unless said otherwise.
@Suite struct RangeRequestTests {
    @Test(arguments: [
        ("bytes=0-99", RangeRequest.part(offset: 0, length: 100)),
        ("bytes=100-", .part(offset: 100, length: 900)),
        ("bytes=-100", .part(offset: 900, length: 100)),
        ("bytes=-5000", .part(offset: 0, length: 1000)),
        ("bytes=990-5000", .part(offset: 990, length: 10)),
        ("bytes=999-999", .part(offset: 999, length: 1)),
        (" bytes=10-19 ", .part(offset: 10, length: 10)),
        ("BYTES=10-19", .part(offset: 10, length: 10)),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=1000-2000", .unsatisfiable),
        ("bytes=99999999999999999999999-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=20-10", .whole),
        ("bytes=0-9,20-29", .whole),
        ("items=0-9", .whole),
        ("bytes=a-b", .whole),
        ("bytes=", .whole),
        ("bytes=5", .whole),
    ])
    func range(header: String, expected: RangeRequest) {
        #expect(RangeRequest(header: header, size: 1000) == expected)
    }

    @Test func noHeaderIsTheWholeFile() {
        #expect(RangeRequest(header: nil, size: 1000) == .whole)
    }

    @Test func anyRangeOfAnEmptyFileIsUnsatisfiable() {
        #expect(RangeRequest(header: "bytes=0-", size: 0) == .unsatisfiable)
        #expect(RangeRequest(header: "bytes=-1", size: 0) == .unsatisfiable)
    }
}
