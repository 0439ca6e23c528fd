import NSECrypto
import NSEJSON

/// A broadcast channel (iOS 18): an id APNs makes for an app, which Live Activities subscribe to
/// (`pushType: .channel(id)`) and providers send to (`POST /4/broadcasts/apps/{bundle}`), kept by ``ChannelStore``.
public struct BroadcastChannel: Sendable, Equatable {
    /// What APNs keeps of a broadcast for a device that is not reachable when it is sent (`message-storage-policy`).
    public enum StoragePolicy: Int64, Sendable, Equatable {
        /// 0, "No Message Stored": a device offline when the broadcast goes never gets it.
        case noStorage = 0
        /// 1, "Most Recent Message Stored": the newest broadcast waits for an offline device.
        case mostRecent = 1
    }

    /// 16 random bytes in standard base64 (24 characters, `==` at the end), as APNs's channel ids are.
    public let id: String
    public let bundleID: String
    /// The APNs environment it was made in (`development` or `production`): channels are per environment.
    public let environment: String
    public let storagePolicy: StoragePolicy
    /// Unix milliseconds.
    public let createdAt: Int64

    /// A new channel id.
    static func newID() throws(CryptoError) -> String {
        Base64.encode(try SecureRandom.bytes(16))
    }

    /// Whether `text` is an id of the shape APNs gives (base64 of 16 bytes): anything else is `BadChannelId`.
    static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 24 && Base64.decode(text)?.count == 16
    }

    public init(
        id: String, bundleID: String, environment: String, storagePolicy: StoragePolicy, createdAt: Int64
    ) {
        self.id = id
        self.bundleID = bundleID
        self.environment = environment
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
    }

    /// `GET /1/apps/{bundle}/channels`'s body: what the channel was made with.
    var json: JSON {
        ["message-storage-policy": .int(storagePolicy.rawValue), "push-type": "LiveActivity"]
    }
}
