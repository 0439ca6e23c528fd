import Foundation
import NSECrypto
import NSESystem

/// `mask: .hash`: a hidden value as `<mask.hash: 'BASE64'>`, the shape of Apple's, so messages about one value can be
/// correlated without the value being in the log.
enum PrivacyHash {
    /// The machine's boot id (a random UUID the kernel draws at boot): one salt for every extension run of this boot,
    /// so a value hashes alike across notifications, and a new one after a reboot. Where /proc is not readable, 16
    /// random bytes: hashes then agree within one process only. The boot id is not secret on the machine itself: there,
    /// a value with few possibilities (a phone number) can be found again by trying them all; a log read elsewhere
    /// cannot be reversed so.
    static let salt: [UInt8] = {
        if let bootID = try? FileSystem.readText("/proc/sys/kernel/random/boot_id", limit: 64), !bootID.isEmpty {
            return Array(bootID.utf8)
        }
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()

    /// The first 16 bytes of SHA-256(salt ‖ UTF-8 of `text`), in base64.
    static func masked(_ text: String) -> String {
        let digest = Digest.sha256(salt + Array(text.utf8))
        return "<mask.hash: '\(Data(digest.prefix(16)).base64EncodedString())'>"
    }
}
