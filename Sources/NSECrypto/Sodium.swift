import CSodium

/// The bridge to libsodium: the only Swift file that touches its C API. Every failure becomes a thrown error.
/// - SeeAlso: https://doc.libsodium.org/public-key_cryptography/sealed_boxes
enum Sodium {
    static let publicKeyBytes = Int(crypto_box_PUBLICKEYBYTES)
    static let secretKeyBytes = Int(crypto_box_SECRETKEYBYTES)
    static let sealOverhead = Int(crypto_box_sealbytes())

    private static let initialized: Bool = sodium_init() >= 0

    /// Initialises libsodium once; throws when it cannot start (no entropy source).
    static func ensureInitialized() throws(CryptoError) {
        guard initialized else {
            throw CryptoError(code: .unavailable, description: "libsodium could not be initialised")
        }
    }

    /// A fresh X25519 key pair.
    static func keyPair() throws(CryptoError) -> (publicKey: [UInt8], secretKey: [UInt8]) {
        try ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        var secretKey = [UInt8](repeating: 0, count: secretKeyBytes)
        guard crypto_box_keypair(&publicKey, &secretKey) == 0 else {
            throw CryptoError(code: .unavailable, description: "libsodium could not make a key pair")
        }
        return (publicKey, secretKey)
    }

    /// The public key that belongs to `secretKey`.
    static func publicKey(forSecretKey secretKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ensureInitialized()
        guard secretKey.count == secretKeyBytes else {
            throw CryptoError(code: .invalidKey, description: "a secret key is \(secretKeyBytes) bytes")
        }
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        guard crypto_scalarmult_base(&publicKey, secretKey) == 0 else {
            throw CryptoError(code: .invalidKey, description: "the secret key is not a valid X25519 key")
        }
        return publicKey
    }

    /// `crypto_box_seal`: anonymous public-key encryption to `publicKey`.
    static func seal(_ message: [UInt8], to publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ensureInitialized()
        guard publicKey.count == publicKeyBytes else {
            throw CryptoError(code: .invalidKey, description: "a public key is \(publicKeyBytes) bytes")
        }
        var sealed = [UInt8](repeating: 0, count: message.count + sealOverhead)
        guard crypto_box_seal(&sealed, message, UInt64(message.count), publicKey) == 0 else {
            throw CryptoError(code: .invalidKey, description: "libsodium refused to seal to this public key")
        }
        return sealed
    }

    /// `crypto_box_seal_open`; `nil` when the box was not sealed to this key pair or was altered.
    static func open(_ sealed: [UInt8], publicKey: [UInt8], secretKey: [UInt8]) throws(CryptoError) -> [UInt8]? {
        try ensureInitialized()
        guard sealed.count >= sealOverhead else { return nil }
        var message = [UInt8](repeating: 0, count: sealed.count - sealOverhead)
        let status = crypto_box_seal_open(&message, sealed, UInt64(sealed.count), publicKey, secretKey)
        return status == 0 ? message : nil
    }

    static let signPublicKeyBytes = Int(crypto_sign_PUBLICKEYBYTES)
    static let signSecretKeyBytes = Int(crypto_sign_SECRETKEYBYTES)
    static let signatureBytes = Int(crypto_sign_BYTES)

    /// A fresh Ed25519 key pair (`crypto_sign_keypair`).
    static func signingKeyPair() throws(CryptoError) -> (publicKey: [UInt8], secretKey: [UInt8]) {
        try ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: signPublicKeyBytes)
        var secretKey = [UInt8](repeating: 0, count: signSecretKeyBytes)
        guard crypto_sign_keypair(&publicKey, &secretKey) == 0 else {
            throw CryptoError(code: .unavailable, description: "libsodium could not make a signing key pair")
        }
        return (publicKey, secretKey)
    }

    /// The Ed25519 public key inside a libsodium signing secret key.
    static func signingPublicKey(forSecretKey secretKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ensureInitialized()
        guard secretKey.count == signSecretKeyBytes else {
            throw CryptoError(code: .invalidKey, description: "a signing secret key is \(signSecretKeyBytes) bytes")
        }
        var publicKey = [UInt8](repeating: 0, count: signPublicKeyBytes)
        guard crypto_sign_ed25519_sk_to_pk(&publicKey, secretKey) == 0 else {
            throw CryptoError(code: .invalidKey, description: "the signing secret key is not valid")
        }
        return publicKey
    }

    /// `crypto_sign_detached`: the 64-byte Ed25519 signature of `message`.
    static func sign(_ message: [UInt8], secretKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ensureInitialized()
        guard secretKey.count == signSecretKeyBytes else {
            throw CryptoError(code: .invalidKey, description: "a signing secret key is \(signSecretKeyBytes) bytes")
        }
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        guard crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey) == 0 else {
            throw CryptoError(code: .invalidKey, description: "libsodium could not sign")
        }
        return signature
    }

    /// `crypto_sign_verify_detached`: whether `signature` is `publicKey`'s over `message`.
    static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard (try? ensureInitialized()) != nil, signature.count == signatureBytes,
            publicKey.count == signPublicKeyBytes
        else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    static let aeadKeyBytes = Int(crypto_aead_xchacha20poly1305_ietf_keybytes())
    static let aeadNonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    static let aeadOverhead = Int(crypto_aead_xchacha20poly1305_ietf_abytes())

    /// `crypto_aead_xchacha20poly1305_ietf_encrypt`: `message` encrypted and authenticated with `additionalData`.
    /// - SeeAlso: https://doc.libsodium.org/secret-key_cryptography/aead/chacha20-poly1305/xchacha20-poly1305_construction
    static func aeadEncrypt(_ message: [UInt8], additionalData: [UInt8], nonce: [UInt8], key: [UInt8])
        throws(CryptoError) -> [UInt8]
    {
        try ensureInitialized()
        guard key.count == aeadKeyBytes, nonce.count == aeadNonceBytes else {
            throw CryptoError(
                code: .invalidKey, description: "an AEAD key is \(aeadKeyBytes) bytes and its nonce \(aeadNonceBytes)")
        }
        var output = [UInt8](repeating: 0, count: message.count + aeadOverhead)
        var length: UInt64 = 0
        guard
            crypto_aead_xchacha20poly1305_ietf_encrypt(
                &output, &length, message, UInt64(message.count), additionalData, UInt64(additionalData.count), nil,
                nonce, key) == 0
        else {
            throw CryptoError(code: .unavailable, description: "libsodium could not encrypt")
        }
        return Array(output.prefix(Int(length)))
    }

    /// `crypto_aead_xchacha20poly1305_ietf_decrypt`; `nil` when the ciphertext or `additionalData` was altered, or
    /// the key is another.
    static func aeadDecrypt(_ ciphertext: [UInt8], additionalData: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8]? {
        guard (try? ensureInitialized()) != nil, key.count == aeadKeyBytes, nonce.count == aeadNonceBytes,
            ciphertext.count >= aeadOverhead
        else { return nil }
        var output = [UInt8](repeating: 0, count: ciphertext.count - aeadOverhead)
        var length: UInt64 = 0
        let status = crypto_aead_xchacha20poly1305_ietf_decrypt(
            &output, &length, nil, ciphertext, UInt64(ciphertext.count), additionalData,
            UInt64(additionalData.count), nonce, key)
        return status == 0 ? Array(output.prefix(Int(length))) : nil
    }

    /// BLAKE2b with an output of `length` bytes.
    static func genericHash(_ input: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
        try ensureInitialized()
        var output = [UInt8](repeating: 0, count: length)
        guard crypto_generichash(&output, length, input, UInt64(input.count), nil, 0) == 0 else {
            throw CryptoError(code: .unavailable, description: "libsodium could not hash")
        }
        return output
    }

    /// SHA-256. Needs no `sodium_init`: SHA-256 has one portable implementation (nothing to pick at start-up) and
    /// uses no randomness, and `crypto_hash_sha256` always returns 0. So it cannot fail, and SIP digest
    /// authentication can hash without a `throws`.
    /// - SeeAlso: https://doc.libsodium.org/advanced/sha-2_hash_function
    static func sha256(_ input: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = crypto_hash_sha256(&output, input, UInt64(input.count))
        return output
    }

    /// Cryptographically secure random bytes.
    static func randomBytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        try ensureInitialized()
        var output = [UInt8](repeating: 0, count: count)
        randombytes_buf(&output, count)
        return output
    }

    /// Base64 text; `urlSafe` uses `-_` and no padding.
    static func base64(_ input: [UInt8], urlSafe: Bool) -> String {
        let variant = urlSafe ? sodium_base64_VARIANT_URLSAFE_NO_PADDING : sodium_base64_VARIANT_ORIGINAL
        let length = sodium_base64_encoded_len(input.count, variant)
        var output = [CChar](repeating: 0, count: length)
        _ = sodium_bin2base64(&output, length, input, input.count, variant)
        return output.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Decodes base64 (`urlSafe`: `-_`, no padding; otherwise the standard alphabet with padding);
    /// `nil` when the text is not valid in that variant.
    static func decodeBase64(_ text: String, urlSafe: Bool) -> [UInt8]? {
        let variant = urlSafe ? sodium_base64_VARIANT_URLSAFE_NO_PADDING : sodium_base64_VARIANT_ORIGINAL
        let input = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: input.count * 3 / 4 + 3)
        var length = 0
        var end: UnsafePointer<CChar>? = nil
        let status = input.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                sodium_base642bin(&output, output.count, $0, buffer.count, nil, &length, &end, variant)
            }
        }
        guard status == 0, let end else { return nil }
        let consumed = input.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) { end - $0 }
        }
        guard consumed == input.count else { return nil }
        return Array(output[0..<length])
    }

    /// Overwrites a buffer with zeros in a way the compiler cannot remove.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }

    /// Zeroes the storage `bytes` refers to, where it is: ``wipe(_:)`` of a second reference to shared storage would
    /// zero a copy (copy on write) and leave the secret in the storage being freed. Only for storage its owner is
    /// giving up (a key's `deinit`), made by ``ownedCopy(_:)`` so that nobody else's array shares it.
    static func wipeInPlace(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { sodium_memzero(UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count) }
    }

    /// A copy of `bytes` in storage of its own (an array's plain copy shares the caller's).
    static func ownedCopy(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Array($0) }
    }
}
