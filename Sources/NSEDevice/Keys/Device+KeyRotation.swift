public import NSECrypto
public import NSEJSON
import NSESystem

/// What `nse device rotate-key` did.
public struct KeyRotation: Sendable {
    /// The new current key's id, now in `device.json` for senders.
    public var keyID: String
    public var publicKey: PublicKey
    /// The key this rotation retired; nil when the rotation only finished an interrupted one.
    public var retired: RetiredKey?
    /// Retired keys still in their grace period after the rotation (the one just retired included).
    public var retained: [RetiredKey]
    /// Ids of retired keys whose grace period had ended, dropped by this rotation.
    public var dropped: [String]
    /// True when a previous rotation had replaced the key but not yet published it, and this one finished it.
    public var resumed: Bool

    /// The line `rotate-key` prints (no secret).
    public func json(directory: String, now: Int64) -> JSON {
        [
            "directory": .string(directory), "key_id": .string(keyID), "public_key": .string(publicKey.base64),
            "retired": retired.map { $0.summary(now: now) } ?? .null,
            "retained": .array(retained.map { $0.summary(now: now) }),
            "dropped": .array(dropped.map(JSON.string)), "resumed": .bool(resumed),
        ]
    }
}

extension Device {
    /// The default grace period: a week, the time `nse sip-server` (as Flexisip's `message-delivery-timeout`) keeps a
    /// held message for a device, so that a message sealed to the old key just before the rotation and delivered
    /// as late as the server allows still opens.
    public static let defaultKeyGrace: Int64 = 604_800
    /// The longest grace period `rotate-key` takes (a year): a longer one is a typo, not a policy.
    public static let maximumKeyGrace: Int64 = 31_536_000

    /// The device's keys: the current one and the retired ones.
    public var keyRing: KeyRing { KeyRing(directory: Path.join(directory, "keys")) }

    /// Makes a new key pair the current one and retires the old one for `grace` seconds; drops the retired keys
    /// whose grace period has ended.
    ///
    /// The order keeps every key needed on disk at every step, so that a crash anywhere leaves a device that opens
    /// everything: (1) the old key is written under `keys/retired/` and synced; (2) the new key replaces
    /// `keys/private.key` in one rename, synced; (3) `device.json` publishes the new public key. Between (2) and
    /// (3) senders still seal to the old key, which is retained; running the command again finishes the
    /// publication (`resumed`) instead of making another key.
    public mutating func rotateKey(grace: Int64, now: Int64) throws(DeviceError)
        -> KeyRotation
    {
        guard grace >= 0, grace <= Device.maximumKeyGrace else {
            throw DeviceError(
                .invalidOption, "--grace must be from 0 to \(Device.maximumKeyGrace) seconds, not \(grace)")
        }
        let ring = keyRing
        let current = try ring.currentKey()
        let currentPublic: PublicKey
        do { currentPublic = try current.publicKey() } catch {
            throw DeviceError(.corrupt, "\(ring.currentKeyPath): \(error.description)")
        }
        // An interrupted rotation: the current key is new and the one device.json publishes is retired.
        var resumed = false
        if currentPublic.keyID != config.keyID,
            let lookup = try? ring.key(for: config.keyID, current: current, now: now)
        {
            if case .unknown = lookup { resumed = false } else { resumed = true }
        }
        var published = currentPublic
        var retiredID: String? = nil
        if !resumed {
            let fresh: KeyPair
            do { fresh = try KeyPair.generate() } catch { throw DeviceError(.io, error.description) }
            try ring.retire(
                RetiredKey(
                    keyID: currentPublic.keyID, publicKey: currentPublic, retiredAt: now, dropAt: now + grace,
                    secretKey: current))
            try ring.install(fresh.secretKey)
            published = fresh.publicKey
            retiredID = currentPublic.keyID
        }
        config.publicKey = published.base64
        config.keyID = published.keyID
        try save()
        let dropped = try ring.dropExpired(now: now)
        let kept = try ring.retiredKeys()
        return KeyRotation(
            keyID: published.keyID, publicKey: published, retired: kept.first { $0.keyID == retiredID },
            retained: kept.filter { $0.isUsable(at: now) }, dropped: dropped, resumed: resumed)
    }

    /// What `nse device show` says of the keys: the current key's id, the published one when they differ (an
    /// interrupted rotation), and the retired keys.
    public func keysSummary(now: Int64) -> JSON {
        var object: JSONObject = [:]
        do {
            let current = try keyRing.currentKey().publicKey().keyID
            object["current"] = .string(current)
            if current != config.keyID {
                object["problem"] = .string(
                    "device.json publishes key \(config.keyID), not the current key: run `nse device rotate-key` again to finish the rotation"
                )
            }
        } catch {
            object["error"] = .string("\(error)")
        }
        do {
            object["retired"] = .array(try keyRing.retiredKeys().map { $0.summary(now: now) })
        } catch {
            object["retired_error"] = .string(error.description)
        }
        return .object(object)
    }
}
