// NSECrypto: keys and the sealed envelope, over libsodium. Errors never carry key bytes or plaintext.
//
// Files:
//   Keys         the device's X25519 key pair, Base64, SecureRandom (UUIDs)
//   SigningKeys  senders' Ed25519 keys: who signed an `nse2` envelope
//   Envelope     the sealed envelope: anonymous `nse1`, signed-then-sealed `nse2` (docs/envelope.md)
//   MultiEnvelope  `nse3`, for a person's several devices: content encrypted once, its key sealed to each device
//   Digest       SHA-256 (SIP digest, hashes), from libsodium: no second crypto library in the extension
//   Hex          the package's one hex encoder and hex-digit reader (nonces, tags, tokens, UUIDs)
//   CryptoError  what could not be done
//   Sodium       the only file touching libsodium: every return code checked, `sodium_init` once, lazily
