/// A sender's Ed25519 public key: who signed an envelope (format `nse2`).
public struct SigningPublicKey: Sendable, Equatable, Hashable {
    /// The 32 key bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Sodium.signPublicKeyBytes else {
            throw CryptoError(
                code: .invalidKey,
                description: "a signing public key is \(Sodium.signPublicKeyBytes) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Parses standard or URL-safe base64.
    public init(base64 text: String) throws(CryptoError) {
        guard let bytes = Base64.decode(text) else {
            throw CryptoError(code: .invalidKey, description: "the signing public key is not valid base64")
        }
        try self.init(bytes: bytes)
    }

    /// Standard base64 of the key.
    public var base64: String { Base64.encode(bytes) }

    /// Whether `signature` is this key's over `message`.
    public func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        Sodium.verify(signature, of: message, publicKey: bytes)
    }
}

/// A sender's Ed25519 secret key (libsodium's 64-byte form). Its bytes are wiped when the last copy goes away, and
/// never printed.
public final class SigningSecretKey: Sendable, CustomStringConvertible {
    let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Sodium.signSecretKeyBytes else {
            throw CryptoError(
                code: .invalidKey,
                description: "a signing secret key is \(Sodium.signSecretKeyBytes) bytes, not \(bytes.count)")
        }
        // Storage of its own, zeroed in place when the key goes away (the caller's array is left alone).
        self.bytes = Sodium.ownedCopy(bytes)
    }

    /// A new identity.
    public static func generate() throws(CryptoError) -> SigningSecretKey {
        let secret = try Sodium.signingKeyPair().secretKey
        // The key keeps a copy of its own; libsodium's goes.
        defer { Sodium.wipeInPlace(secret) }
        return try SigningSecretKey(bytes: secret)
    }

    deinit { Sodium.wipeInPlace(bytes) }

    public func publicKey() throws(CryptoError) -> SigningPublicKey {
        try SigningPublicKey(bytes: Sodium.signingPublicKey(forSecretKey: bytes))
    }

    /// The 64-byte Ed25519 signature of `message`.
    public func sign(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try Sodium.sign(message, secretKey: bytes)
    }

    /// The key in standard base64, for writing the identity file only.
    public func exportBase64() -> String { Base64.encode(bytes) }

    public var description: String { "SigningSecretKey(redacted)" }
}
