public import NSECrypto
import NSEJSON
import NSESystem

/// The device's X25519 keys: the current one, `keys/private.key` (what `device.json` publishes for senders), and
/// the ones rotations retired, `keys/retired/<key id>.json` (``RetiredKey``), each opening what was sealed to it
/// until its grace period ends.
///
/// A device made before rotations existed has no `keys/retired/`: its key file is the current key, nothing else
/// changes. Every envelope names the key it was sealed to (``Envelope/keyID``), so opening picks that key rather
/// than trying each: the current one, else a retired one still in its grace period.
public struct KeyRing: Sendable {
    /// The device's `keys/` folder.
    public let directory: String

    /// The current secret key's file.
    public var currentKeyPath: String { Path.join(directory, "private.key") }
    /// Where retired keys are kept.
    public var retiredDirectory: String { Path.join(directory, "retired") }

    public init(directory: String) {
        self.directory = directory
    }

    /// Which key opens an envelope sealed to `keyID`, at `now`.
    public enum Lookup: Sendable {
        /// The current key.
        case current(SecretKey)
        /// A retired key still in its grace period.
        case retired(SecretKey, RetiredKey)
        /// A retired key whose grace period has ended: it opens nothing.
        case expired(RetiredKey)
        /// No key of this device has that id (the current key is given, for the usual wrong-key refusal).
        case unknown(SecretKey)
    }

    // MARK: - reading

    /// Reads the current secret key, refusing a key file that anyone but the owner can access.
    public func currentKey() throws(DeviceError) -> SecretKey {
        let path = currentKeyPath
        let text = try OwnerOnlyFile.read(path, what: "a private key", limit: 4096) { error in
            DeviceError(.notFound, "the device's private key is missing: \(error.description)")
        }
        guard let text, let bytes = Base64.decode(text.filter { !$0.isWhitespace }) else {
            throw DeviceError(.corrupt, "\(path) does not hold a base64 key")
        }
        do { return try SecretKey(bytes: bytes) } catch { throw DeviceError(.corrupt, "\(path): \(error.description)") }
    }

    /// The key that opens what was sealed to `keyID`. `current` is the current key when the caller has it already.
    /// A retired key found past its grace period is dropped on the way (best effort: whether or not its file could
    /// be rewritten, it is refused by its time).
    public func key(for keyID: String, current: SecretKey? = nil, now: Int64) throws(DeviceError) -> Lookup {
        let currentKey: SecretKey
        if let current { currentKey = current } else { currentKey = try self.currentKey() }
        let currentID: String
        do { currentID = try currentKey.publicKey().keyID } catch {
            throw DeviceError(.corrupt, "\(currentKeyPath): \(error.description)")
        }
        if keyID == currentID { return .current(currentKey) }
        // The id comes from the sender: only a well-formed one becomes a file name.
        guard KeyRing.isKeyID(keyID) else { return .unknown(currentKey) }
        let path = retiredPath(keyID)
        guard FileSystem.exists(path) else { return .unknown(currentKey) }
        let retired = try RetiredKey(file: path)
        if let secret = retired.secretKey, retired.isUsable(at: now) { return .retired(secret, retired) }
        if retired.secretKey != nil { try? drop(retired, now: now) }
        var record = retired
        record.secretKey = nil
        return .expired(record)
    }

    /// Every retired key, usable or dropped, oldest retirement first (files that are not key records skipped).
    public func retiredKeys() throws(DeviceError) -> [RetiredKey] {
        guard FileSystem.isDirectory(retiredDirectory) else { return [] }
        let names: [String]
        do { names = try FileSystem.contents(ofDirectory: retiredDirectory) } catch {
            throw DeviceError(.unreadable, error.description)
        }
        var keys: [RetiredKey] = []
        for name in names where name.hasSuffix(".json") && KeyRing.isKeyID(String(name.dropLast(5))) {
            let path = Path.join(retiredDirectory, name)
            do { keys.append(try RetiredKey(file: path)) } catch {
                // Dropped by another process between the listing and the read.
                if error.code == .notFound { continue }
                throw error
            }
        }
        return keys.sorted { ($0.retiredAt, $0.keyID) < ($1.retiredAt, $1.keyID) }
    }

    // MARK: - changing

    /// Drops every retired key whose grace period has ended at `now`; returns their ids.
    @discardableResult
    public func dropExpired(now: Int64) throws(DeviceError) -> [String] {
        var dropped: [String] = []
        for key in try retiredKeys() where key.secretKey != nil && !key.isUsable(at: now) {
            try drop(key, now: now)
            dropped.append(key.keyID)
        }
        return dropped
    }

    /// Deletes a retired key's secret: its file is replaced, in one rename, by the record without the secret, and the
    /// folder synced, so the secret is gone once this returns and a crash leaves one file or the other, never none.
    /// Only files under `retired/` are ever rewritten: the current key is not touched.
    func drop(_ key: RetiredKey, now: Int64) throws(DeviceError) {
        var record = key
        record.secretKey = nil
        record.droppedAt = now
        do {
            try FileSystem.writeAtomically(retiredPath(key.keyID), record.json.serialized() + "\n", mode: 0o600)
            try FileSystem.syncDirectory(retiredDirectory)
        } catch {
            throw DeviceError(.io, error.description)
        }
    }

    /// Writes a key's retirement record, durably (file and folder synced) before anything else changes.
    func retire(_ key: RetiredKey) throws(DeviceError) {
        do {
            try FileSystem.createDirectory(retiredDirectory, mode: 0o700, parentMode: 0o700)
            try FileSystem.writeAtomically(retiredPath(key.keyID), key.json.serialized() + "\n", mode: 0o600)
            try FileSystem.syncDirectory(retiredDirectory)
        } catch {
            throw DeviceError(.io, error.description)
        }
    }

    /// Replaces the current key (atomically, mode 0600, synced).
    func install(_ key: SecretKey) throws(DeviceError) {
        do {
            try FileSystem.writeAtomically(currentKeyPath, key.exportBase64() + "\n", mode: 0o600)
            try FileSystem.syncDirectory(directory)
        } catch {
            throw DeviceError(.io, error.description)
        }
    }

    private func retiredPath(_ keyID: String) -> String { Path.join(retiredDirectory, keyID + ".json") }

    /// Whether `text` has the shape of a ``PublicKey/keyID``: 11 characters of URL-safe base64 (8 bytes).
    static func isKeyID(_ text: String) -> Bool {
        text.utf8.count == 11
            && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D
                    || $0 == 0x5F
            }
    }
}
