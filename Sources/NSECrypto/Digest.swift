/// Hash functions.
public enum Digest {
    /// SHA-256 of `bytes` (32 bytes), from libsodium.
    public static func sha256(_ bytes: some Sequence<UInt8>) -> [UInt8] { Sodium.sha256(Array(bytes)) }
}
