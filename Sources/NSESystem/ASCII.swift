/// ASCII case for protocol text: SIP and HTTP header names, URI schemes and parameters, RFC 8599 push parameters,
/// content types. Those compare case-insensitively in ASCII only; `String.lowercased()` maps Unicode too, so it would
/// let a non-ASCII name pass for a token (KELVIN SIGN, U+212A, lowercases to `k`). Here every other byte, UTF-8
/// included, is kept as it is. `@inlinable` because the SIP parser and the HTTP client call it for every header
/// they look up, from other modules.
public enum ASCII {
    /// `text` with A–Z lowercased.
    @inlinable
    public static func lowercased(_ text: some StringProtocol) -> String {
        let utf8 = text.utf8
        // Most protocol text is lower case already: a copy of it (none for a `String`), not a rewrite.
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return String(text) }
        // Written in place: a name of up to 15 bytes stays a small string, with no allocation at all.
        return String(unsafeUninitializedCapacity: utf8.count) { buffer in
            var count = 0
            for byte in utf8 {
                buffer[count] = lowercased(byte)
                count += 1
            }
            return count
        }
    }

    /// `byte` lowercased if it is A–Z.
    @inlinable
    public static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    /// Whether `a` and `b` are equal with A–Z taken as a–z (header names, parameter names), without making a copy.
    @inlinable
    public static func equalsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let (left, right) = (a.utf8, b.utf8)
        guard left.count == right.count else { return false }
        // Indices, not `zip`: a zip of two UTF-8 views is a generic type whose metadata a fresh process builds at
        // run time on first use (~50 µs of an extension's SIP fetch).
        var i = left.startIndex
        var j = right.startIndex
        while i != left.endIndex {
            if lowercased(left[i]) != lowercased(right[j]) { return false }
            left.formIndex(after: &i)
            right.formIndex(after: &j)
        }
        return true
    }
}
