import Synchronization

/// An X25519 public key.
public struct PublicKey: Sendable, Equatable {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// Wraps 32 bytes.
    public init(bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Sodium.publicKeyBytes else {
            throw CryptoError(
                code: .invalidKey, description: "a public key is \(Sodium.publicKeyBytes) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Parses standard or URL-safe base64.
    public init(base64 text: String) throws(CryptoError) {
        guard let bytes = Base64.decode(text) else {
            throw CryptoError(code: .invalidKey, description: "the public key is not valid base64")
        }
        try self.init(bytes: bytes)
    }

    /// Standard base64 of the key.
    public var base64: String { Base64.encode(bytes) }

    /// The short identifier an envelope names its recipient by: URL-safe base64 of the first 8 bytes of
    /// BLAKE2b-256 over the key.
    public var keyID: String {
        let digest = (try? Sodium.genericHash(bytes, length: 32)) ?? bytes
        return Base64.encodeURLSafe(Array(digest.prefix(8)))
    }
}

/// An X25519 secret key. Its bytes are wiped when the last copy goes away, and never printed.
public final class SecretKey: Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    /// Wraps 32 bytes.
    public init(bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Sodium.secretKeyBytes else {
            throw CryptoError(
                code: .invalidKey, description: "a secret key is \(Sodium.secretKeyBytes) bytes, not \(bytes.count)")
        }
        // Storage of its own, zeroed in place when the key goes away (the caller's array is left alone).
        self.bytes = Sodium.ownedCopy(bytes)
    }

    deinit { Sodium.wipeInPlace(bytes) }

    /// ``publicKey()`` once derived: a push's opening asks for it up to three times (the key's id, the sealed box's
    /// recipient), each a scalar multiplication, 5 % of a fresh extension process's CPU.
    private let derived = Mutex<PublicKey?>(nil)

    /// The last key derived in this process, by its secret key's BLAKE2b digest (the secret itself is not kept), for
    /// the next `SecretKey` read from the same file: a warm extension reads the device's key again for each push (it
    /// may have been rotated), and the same key costs no scalar multiplication again (1.6 % of a warm SIP push's
    /// extension CPU; the digest costs about a hundredth of one).
    private static let lastDerived = Mutex<(digest: [UInt8], public: PublicKey)?>(nil)

    /// The public key that belongs to this secret key.
    public func publicKey() throws(CryptoError) -> PublicKey {
        if let known = derived.withLock({ $0 }) { return known }
        let digest = try Sodium.genericHash(bytes, length: 32)
        let key: PublicKey
        if let last = Self.lastDerived.withLock({ $0 }), last.digest == digest {
            key = last.public
        } else {
            key = try PublicKey(bytes: Sodium.publicKey(forSecretKey: bytes))
            Self.lastDerived.withLock { $0 = (digest, key) }
        }
        derived.withLock { $0 = key }
        return key
    }

    /// The key in standard base64, for writing the key file only.
    public func exportBase64() -> String { Base64.encode(bytes) }

    public var description: String { "SecretKey(redacted)" }
}

/// A public/secret key pair.
public struct KeyPair: Sendable {
    public let publicKey: PublicKey
    public let secretKey: SecretKey

    public init(publicKey: PublicKey, secretKey: SecretKey) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A fresh random key pair.
    public static func generate() throws(CryptoError) -> KeyPair {
        let (publicBytes, secretBytes) = try Sodium.keyPair()
        // The key keeps a copy of its own; libsodium's goes.
        defer { Sodium.wipeInPlace(secretBytes) }
        return KeyPair(publicKey: try PublicKey(bytes: publicBytes), secretKey: try SecretKey(bytes: secretBytes))
    }
}

/// Base64 through libsodium (constant-time).
public enum Base64 {
    /// Standard alphabet with padding.
    public static func encode(_ bytes: [UInt8]) -> String { Sodium.base64(bytes, urlSafe: false) }
    /// URL-safe alphabet without padding.
    public static func encodeURLSafe(_ bytes: [UInt8]) -> String { Sodium.base64(bytes, urlSafe: true) }
    /// Decodes the standard alphabet (padded) or the URL-safe one (unpadded); `nil` when neither fits.
    public static func decode(_ text: String) -> [UInt8]? {
        Sodium.decodeBase64(text, urlSafe: false) ?? Sodium.decodeBase64(text, urlSafe: true)
    }
    /// Decodes the URL-safe alphabet without padding only.
    public static func decodeURLSafe(_ text: String) -> [UInt8]? { Sodium.decodeBase64(text, urlSafe: true) }
}

/// Secure randomness.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] { try Sodium.randomBytes(count) }

    /// Lowercase hex of `count` random bytes.
    public static func hex(_ count: Int) throws(CryptoError) -> String { Hex.encode(try bytes(count)) }

    /// A random RFC 4122 version-4 UUID, uppercase as iOS prints them.
    public static func uuid() throws(CryptoError) -> String { Hex.uuid(try bytes(16)) }
}
