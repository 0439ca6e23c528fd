import Testing

@testable import NSECrypto

/// A secret key's bytes are zeroed where they are when the key goes away, and the array it was made from is not:
/// wiping a second reference to the key's storage used to zero a copy (copy on write), leaving the key in the memory
/// being freed.
@Suite struct SecretKeyWipeTests {
    @Test func anX25519KeysStorageIsZeroedAndItsSourceKept() throws {
        let source = [UInt8](repeating: 7, count: 32)
        var storage: [UInt8] = []
        do {
            let key = try SecretKey(bytes: source)
            _ = try key.publicKey()
            // A second reference to the key's own storage, kept past the key.
            storage = key.bytes
        }
        #expect(storage == [UInt8](repeating: 0, count: 32))
        #expect(source == [UInt8](repeating: 7, count: 32))
    }

    @Test func aSigningKeysStorageIsZeroedAndItsSourceKept() throws {
        let generated = try SigningSecretKey.generate()
        // Copied while the generated key lives: its storage is zeroed the moment it goes.
        let source = withExtendedLifetime(generated) { generated.bytes.withUnsafeBufferPointer { Array($0) } }
        var storage: [UInt8] = []
        do {
            let key = try SigningSecretKey(bytes: source)
            _ = try key.sign([1, 2, 3])
            storage = key.bytes
        }
        #expect(storage == [UInt8](repeating: 0, count: 64))
        #expect(source != [UInt8](repeating: 0, count: 64))
    }

    /// The process keeps the last public key it derived: the same secret read again gives it back, another secret
    /// its own.
    @Test func aPublicKeyDerivedAgainIsTheSame() throws {
        let first = try KeyPair.generate()
        let second = try KeyPair.generate()
        // Derived, then read again from the cache (twice in a row), then another key, then the first again.
        #expect(try SecretKey(bytes: first.secretKey.bytes).publicKey() == first.publicKey)
        #expect(try SecretKey(bytes: first.secretKey.bytes).publicKey() == first.publicKey)
        #expect(try SecretKey(bytes: second.secretKey.bytes).publicKey() == second.publicKey)
        #expect(try SecretKey(bytes: second.secretKey.bytes).publicKey() == second.publicKey)
        #expect(try SecretKey(bytes: first.secretKey.bytes).publicKey() == first.publicKey)
    }
}
