public import NSECrypto
public import NSEJSON
import NSESystem

/// A key the device stopped publishing at a rotation (`nse device rotate-key`), kept so that what senders sealed to
/// it before they learned the new key still opens, until `dropAt`; then dropped: its secret is gone and only this
/// record of it stays, so that a late envelope sealed to it is refused with a reason that says what happened.
///
/// One file per key, `keys/retired/<key id>.json`, mode 0600, written atomically:
/// ```
/// {"format":1,"key_id":"…","public_key":"…","secret_key":"…","retired_at":1795000000,"drop_at":1795604800}
/// ```
/// A dropped key's file has `dropped_at` and no `secret_key`.
public struct RetiredKey: Sendable {
    /// The key's ``PublicKey/keyID``, the id envelopes name it by.
    public var keyID: String
    public var publicKey: PublicKey
    /// When the rotation retired it (Unix seconds).
    public var retiredAt: Int64
    /// When its grace period ends: from then on it opens nothing (Unix seconds).
    public var dropAt: Int64
    /// When its secret was deleted, for a dropped key.
    public var droppedAt: Int64?
    /// The secret, while the key is kept (nil once dropped).
    var secretKey: SecretKey?

    /// The file format this build writes and reads.
    static let formatVersion: Int64 = 1

    /// Whether the key may still open envelopes at `now`.
    public func isUsable(at now: Int64) -> Bool { secretKey != nil && now < dropAt }

    /// The file's document.
    var json: JSON {
        var object: JSONObject = [
            "format": .int(RetiredKey.formatVersion), "key_id": .string(keyID), "public_key": .string(publicKey.base64),
            "retired_at": .int(retiredAt), "drop_at": .int(dropAt),
        ]
        if let secretKey { object["secret_key"] = .string(secretKey.exportBase64()) }
        if let droppedAt { object["dropped_at"] = .int(droppedAt) }
        return .object(object)
    }

    /// What `nse device show` and `rotate-key` print of it (never the secret).
    public func summary(now: Int64) -> JSON {
        var object: JSONObject = [
            "key_id": .string(keyID), "retired_at": .string(SystemClock.rfc3339(unixSeconds: retiredAt)),
            "drop_at": .string(SystemClock.rfc3339(unixSeconds: dropAt)),
            "state": .string(isUsable(at: now) ? "retained" : "dropped"),
        ]
        if let droppedAt { object["dropped_at"] = .string(SystemClock.rfc3339(unixSeconds: droppedAt)) }
        return .object(object)
    }

    init(keyID: String, publicKey: PublicKey, retiredAt: Int64, dropAt: Int64, secretKey: SecretKey?) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.retiredAt = retiredAt
        self.dropAt = dropAt
        self.secretKey = secretKey
    }

    /// Reads one file (refused when group or others can access it: it may hold a secret).
    init(file path: String) throws(DeviceError) {
        let text = try OwnerOnlyFile.read(path, what: "a retired private key", limit: 4096) { error in
            DeviceError(.notFound, "a retired key went away: \(error.description)")
        }
        guard let text else { throw DeviceError(.corrupt, "\(path) is larger than 4 KiB") }
        let document: JSONObject
        do {
            document = try JSONObject(json: try JSON.parse(Array(text.utf8)))
        } catch {
            throw DeviceError(.corrupt, "\(path): \(error)")
        }
        do {
            let format: Int64 = try document.field("format")
            guard format == RetiredKey.formatVersion else {
                throw DeviceError(.corrupt, "\(path): format \(format) is not the retired-key format this build reads")
            }
            let publicKey = try PublicKey(base64: try document.field("public_key") as String)
            keyID = try document.field("key_id")
            guard keyID == publicKey.keyID else {
                throw DeviceError(.corrupt, "\(path): key_id is not the id of its public_key")
            }
            self.publicKey = publicKey
            retiredAt = try document.field("retired_at")
            dropAt = try document.field("drop_at")
            droppedAt = try document.field("dropped_at")
            if let secret: String = try document.field("secret_key") {
                guard let bytes = Base64.decode(secret) else {
                    throw DeviceError(.corrupt, "\(path): secret_key is not base64")
                }
                let key = try SecretKey(bytes: bytes)
                guard try key.publicKey() == publicKey else {
                    throw DeviceError(.corrupt, "\(path): secret_key does not belong to its public_key")
                }
                secretKey = key
            }
        } catch let error as DeviceError {
            throw error
        } catch {
            throw DeviceError(.corrupt, "\(path): \(error)")
        }
    }
}
