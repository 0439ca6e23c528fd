import NSECrypto
import Testing

@Suite struct HexTests {
    @Test func encodesLowercaseTwoDigitsPerByte() {
        #expect(Hex.encode([0x00, 0xFF, 0x10, 0xA5]) == "00ff10a5")
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.encode("abc".utf8) == "616263")
        #expect(Hex.encode(AnySequence<UInt8>([0x00, 0x55, 0xAA, 0xFF])) == "0055aaff")
    }

    @Test func readsOneDigitInEitherCaseAndNothingElse() {
        let digits = Array("0123456789abcdefABCDEF".utf8)
        #expect(digits.map { Hex.value(ofDigit: $0) } == (Array(0...15) + Array(10...15)).map { UInt8($0) })
        // The bytes just outside each range: '/' ':' '@' 'G' '`' 'g'.
        for byte in "/:@G`g".utf8 { #expect(Hex.value(ofDigit: byte) == nil) }
    }

    @Test func randomHexHasTheAskedLengthAndVaries() {
        let one = Hex.random(bytes: 10)
        let two = Hex.random(bytes: 10)
        #expect(one.utf8.count == 20 && two.utf8.count == 20)
        #expect(one != two)
        #expect(Hex.random(bytes: 0) == "")
        // Every digit lowercase hex, the two of a byte drawn apart (about 1 pair in 16 is a double, not all of them),
        // past the first eight-byte draw.
        let long = Array(Hex.random(bytes: 64).utf8)
        #expect(long.count == 128 && long.allSatisfy { Hex.value(ofDigit: $0) != nil && !(0x41...0x46).contains($0) })
        #expect(stride(from: 0, to: 128, by: 2).filter { long[$0] == long[$0 + 1] }.count < 32)
        #expect(Set(long[16...]).count > 8)
    }

    @Test func uuidSetsVersionAndVariantAndGroups() {
        #expect(Hex.uuid(Array(0...15)) == "00010203-0405-4607-8809-0A0B0C0D0E0F")
        // Every bit set: the version nibble is 4 and the variant 10xx whatever the bytes; bytes past 16 are ignored.
        #expect(Hex.uuid([UInt8](repeating: 0xFF, count: 20)) == "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF")
        // The call UUID the built-in app derives from a Call-ID: the first 16 bytes of its SHA-256.
        #expect(Hex.uuid(Digest.sha256("abc".utf8)) == "BA7816BF-8F01-4FEA-8141-40DE5DAE2223")
    }
}
