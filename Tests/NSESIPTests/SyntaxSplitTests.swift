import Testing

@testable import NSESIP

/// `SIPSyntax.split` (one array, sized first) keeps `Collection.split`'s rules exactly: empty pieces, the
/// separators left in the last piece once `maxSplits` is reached, a piece not counted when it is omitted.
@Suite struct SyntaxSplitTests {
    static let inputs = [
        "", " ", "  ", "a", "a b", " a b ", "a  b", "SIP/2.0 200 OK", "SIP/2.0 200  Very  OK ", "INVITE sip:a SIP/2.0",
        "   lead", "trail   ", "a b c d e f", "é b\u{301} c",
    ]

    @Test(arguments: [0, 1, 2, 3, Int.max])
    func matchesTheStandardLibrarysSplit(maxSplits: Int) {
        for text in Self.inputs {
            for omitting in [false, true] {
                let s = Substring(text)
                let expected = s.utf8.split(separator: 0x20, maxSplits: maxSplits, omittingEmptySubsequences: omitting)
                    .map { String(s[$0.startIndex..<$0.endIndex]) }
                let got = SIPSyntax.split(s, at: 0x20, maxSplits: maxSplits, omittingEmptySubsequences: omitting)
                #expect(got.map(String.init) == expected, "\"\(text)\" maxSplits \(maxSplits) omitting \(omitting)")
            }
        }
    }

    @Test func aCommaListSplitsOutsideQuotesAndBrackets() {
        var headers = SIPHeaders()
        headers.add("Contact", "<sip:a@x;p=1,2>, \"B, C\" <sip:b@y> ,, <sip:c@z>")
        headers.add("Contact", "<sip:d@w>")
        #expect(
            headers.splitValues("m") == ["<sip:a@x;p=1,2>", "\"B, C\" <sip:b@y>", "<sip:c@z>", "<sip:d@w>"])
        #expect(headers.values("contact").count == 2)
    }
}
