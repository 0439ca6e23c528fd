/// Lowercase hexadecimal encoding helpers.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lowercase hex.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Returns `count` random bytes as lowercase hex (2*count characters).
    public static func random(bytes count: Int) -> String {
        var rng = SystemRandomNumberGenerator()
        var raw: [UInt8] = []
        raw.reserveCapacity(count)
        for _ in 0..<count { raw.append(UInt8.random(in: 0...255, using: &rng)) }
        return encode(raw)
    }
}
