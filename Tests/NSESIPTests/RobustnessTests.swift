import NIOCore
import NIOEmbedded
import Testing

@testable import NSESIP

/// Deterministic mutation tests: malformed input must throw or parse, never trap.
@Suite struct RobustnessTests {
    struct LCG: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
    }

    static let seedMessages: [String] = [
        MessageParsingTests.register,
        "SIP/2.0 401 Unauthorized\r\nVia: SIP/2.0/TCP [::1]:5060;branch=z9hG4bKx;rport\r\nWWW-Authenticate: Digest realm=\"r\", nonce=\"n\", qop=\"auth\"\r\nCSeq: 1 REGISTER\r\nl: 0\r\n\r\n",
    ]

    @Test func mutatedInputNeverTraps() {
        var rng = LCG(state: 42)
        let alphabet: [UInt8] = Array("\r\n :;,<>\"\\@[]=?&/0123456789abzSIP".utf8) + [0x00, 0xFF, 0xC3]
        var parsed = 0
        for i in 0..<3000 {
            var bytes = Array(Self.seedMessages[i % Self.seedMessages.count].utf8)
            for _ in 0..<(1 + Int(rng.next() % 6)) {
                guard !bytes.isEmpty else { break }
                let pos = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 4 {
                case 0: bytes[pos] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: pos)
                case 2: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: pos)
                default: bytes.removeLast(Int(rng.next() % UInt64(min(bytes.count, 40))))
                }
            }
            if let message = try? SIPParser.parseDatagram(bytes) {
                parsed += 1
                // Typed accessors must be safe on whatever parsed.
                _ = message.headers.vias
                _ = message.headers.contacts
                _ = message.headers.from
                _ = message.headers.cseq
                _ = message.headers["WWW-Authenticate"].flatMap { try? DigestChallenge(parsing: $0) }
                _ = try? SIPParser.parseDatagram(message.serialized())
            }
            var decoder = SIPMessageDecoder()
            var buffer = ByteBuffer(bytes: bytes)
            for _ in 0..<4 {
                guard (try? decoder.decodeMessage(&buffer)) != nil else { break }
            }
        }
        #expect(parsed > 0)
    }

    @Test func decoderHandlesFoldedAndBareLFLines() throws {
        let text =
            "MESSAGE sip:a@b SIP/2.0\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\nSubject: one\n  two\nContent-Length: 2\n\nhi"
        var decoder = SIPMessageDecoder()
        var buffer = ByteBuffer()
        var result: SIPMessage? = nil
        for byte in Array(text.utf8) {
            buffer.writeInteger(byte)
            if let m = try decoder.decodeMessage(&buffer) { result = m }
        }
        #expect(result?.headers["Subject"] == "one two")
        #expect(result?.body == Array("hi".utf8))
        #expect(buffer.readableBytes == 0)
    }

    @Test func headersEditing() {
        var h = SIPHeaders([("v", "a"), ("Via", "b"), ("X-Custom", "1")])
        #expect(h.values("VIA") == ["a", "b"])
        h.prepend("Via", "z")
        #expect(h.values("via") == ["z", "a", "b"])
        h.set("via", "only")
        #expect(h.values("Via") == ["only"])
        h.remove("x-custom")
        #expect(!h.contains("X-Custom"))
        #expect(SIPHeaders.canonicalName("CALL-ID") == "Call-ID")
        #expect(SIPHeaders.canonicalName("k") == "Supported")
        #expect(SIPHeaders.canonicalName("X-Other") == "X-Other")
    }
}
