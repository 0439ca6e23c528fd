/// Hexadecimal text: the one encoder of the package (SIP nonces and tags, digest responses, tokens, UUIDs), and the
/// one reader of a hex digit (`%XX` escapes).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)
    private static let upperDigits = Array("0123456789ABCDEF".utf8)

    /// Lowercase hex, two digits per byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        encode(Array(bytes))
    }

    /// Lowercase hex, two digits per byte.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        // Written into the string itself: no array between (up to 7 bytes make a small string, no allocation).
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            var index = 0
            for byte in bytes {
                output[index] = digits[Int(byte >> 4)]
                output[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }

    /// The value of one hex digit, either case; nil for any other byte.
    public static func value(ofDigit byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `count` random bytes as lowercase hex (2 × `count` digits), from the system's generator (`getrandom`).
    /// For identifiers and nonces that must not fail; keys and tokens come from ``SecureRandom`` (libsodium).
    public static func random(bytes count: Int) -> String {
        // Eight bytes a draw: each draw is a getrandom call (a draw per byte made a SIP tag 16 system calls).
        var generator = SystemRandomNumberGenerator()
        return String(unsafeUninitializedCapacity: count * 2) { output in
            var index = 0
            var draw: UInt64 = 0
            for byte in 0..<count {
                if byte % 8 == 0 { draw = generator.next() }
                output[index] = digits[Int((draw >> 4) & 0x0F)]
                output[index + 1] = digits[Int(draw & 0x0F)]
                draw >>= 8
                index += 2
            }
            return index
        }
    }

    /// The RFC 4122 version-4 UUID made of the first 16 `bytes` (version and variant bits set), uppercase as iOS
    /// prints them: `XXXXXXXX-XXXX-4XXX-[89AB]XXX-XXXXXXXXXXXX`.
    /// - Precondition: `bytes` holds at least 16 bytes.
    public static func uuid(_ bytes: some Collection<UInt8>) -> String {
        precondition(bytes.count >= 16, "a UUID is made of 16 bytes")
        // Written into the string itself (an APNs id for every push): by hex, upper-casing and joining groups it
        // was 21 allocations.
        return String(unsafeUninitializedCapacity: 36) { output in
            var index = 0
            for (position, byte) in bytes.prefix(16).enumerated() {
                let value =
                    switch position {
                    case 6: (byte & 0x0F) | 0x40
                    case 8: (byte & 0x3F) | 0x80
                    default: byte
                    }
                if position == 4 || position == 6 || position == 8 || position == 10 {
                    output[index] = UInt8(ascii: "-")
                    index += 1
                }
                output[index] = upperDigits[Int(value >> 4)]
                output[index + 1] = upperDigits[Int(value & 0x0F)]
                index += 2
            }
            return index
        }
    }
}
