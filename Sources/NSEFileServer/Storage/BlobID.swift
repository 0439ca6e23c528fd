import NSECrypto

/// A stored file's name, in its URL and on disk: 128 random bits (`getrandom`) as 32 lowercase hex digits. Nothing
/// else is ever looked up in the storage folder, so no path a client sends (`..`, `%2F`, a hidden name) can name a
/// file outside it, or one of the server's own temporary folders.
enum BlobID {
    static let length = 32

    static func make() -> String { Hex.random(bytes: 16) }

    /// Whether `text` is an id: exactly 32 lowercase hex digits.
    static func isValid(_ text: some StringProtocol) -> Bool {
        text.utf8.count == length
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
