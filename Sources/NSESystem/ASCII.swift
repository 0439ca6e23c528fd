/// ASCII case for protocol text: SIP and HTTP header names, URI schemes and parameters, RFC 8599 push parameters,
/// content types. Those compare case-insensitively in ASCII only; `String.lowercased()` maps Unicode too, so it would
/// let a non-ASCII name pass for a token (KELVIN SIGN, U+212A, lowercases to `k`). Here every other byte, UTF-8
/// included, is kept as it is. `@inlinable` because the SIP parser and the HTTP client call it for every header
/// they look up, from other modules.
public enum ASCII {
    /// `text` with A–Z lowercased.
    @inlinable
    public static func lowercased(_ text: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 { bytes.append(lowercased(byte)) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `byte` lowercased if it is A–Z.
    @inlinable
    public static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
}
