import NSECrypto

/// Generators for branches, tags, Call-IDs and client nonces.
public enum SIPIdentifiers {
    /// The RFC 3261 magic cookie starting every branch.
    public static let magicCookie = "z9hG4bK"

    /// A new branch: `z9hG4bK` followed by 20 random hex digits.
    public static func branch() -> String { magicCookie + Hex.random(bytes: 10) }

    /// A new From/To tag: 16 random hex digits.
    public static func tag() -> String { Hex.random(bytes: 8) }

    /// A new Call-ID: 32 random hex digits.
    public static func callID() -> String { Hex.random(bytes: 16) }

    /// A new digest client nonce (`cnonce`): 16 random hex digits.
    public static func cnonce() -> String { Hex.random(bytes: 8) }
}
