// swift-format-ignore-file: AlwaysUseLowerCamelCase

// Apple's C names, as declared.
import NSECoreFoundation
import NSECrypto

/// A source of random bytes; the only one is the system's, `kSecRandomDefault`.
public final class SecRandom: Sendable {}
public typealias SecRandomRef = SecRandom

/// The system's cryptographically secure random source (nil, as on iOS).
public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes (libsodium's); 0 on success, -1 when no random
/// bytes could be had (the buffer is then left as it was).
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return -1 }
    guard count > 0 else { return 0 }
    guard let random = try? SecureRandom.bytes(count) else { return -1 }
    random.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: count) }
    return 0
}
