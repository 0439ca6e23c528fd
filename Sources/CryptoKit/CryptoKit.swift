// CryptoKit, as E2EE code written for iOS imports it: swift-crypto's `Crypto` is Apple's CryptoKit API for other
// platforms (the same types: SHA256, HMAC, AES.GCM, ChaChaPoly, Curve25519, P256, HKDF…), re-exported under
// CryptoKit's name so `import CryptoKit` compiles unchanged (docs/sdk.md).
@_exported public import Crypto
