public import NSEJSON

/// A device's identity and settings, stored as `device.json` in its container.
public struct DeviceConfig: Sendable, Equatable {
    /// The layout version of the container.
    public static let formatVersion: Int64 = 1

    public var bundleID: String
    public var teamID: String
    /// BCP 47 language tag for the app's strings, e.g. `en` or `fr-FR`.
    public var locale: String
    /// `com.apple.developer.usernotifications.filtering`.
    public var filtering: Bool
    /// APNs token for alert pushes (hex).
    public var remoteToken: String
    /// PushKit token for VoIP pushes (hex).
    public var voipToken: String
    /// The X25519 public key, standard base64.
    public var publicKey: String
    /// The key id envelopes name.
    public var keyID: String
    /// RFC 3339.
    public var createdAt: String

    public init(
        bundleID: String, teamID: String, locale: String, filtering: Bool, remoteToken: String, voipToken: String,
        publicKey: String, keyID: String, createdAt: String
    ) {
        self.bundleID = bundleID
        self.teamID = teamID
        self.locale = locale
        self.filtering = filtering
        self.remoteToken = remoteToken
        self.voipToken = voipToken
        self.publicKey = publicKey
        self.keyID = keyID
        self.createdAt = createdAt
    }

    /// The document written to `device.json`.
    public var json: JSON {
        [
            "format": .int(DeviceConfig.formatVersion),
            "bundle_id": .string(bundleID),
            "team_id": .string(teamID),
            "locale": .string(locale),
            "entitlements": ["com.apple.developer.usernotifications.filtering": .bool(filtering)],
            "tokens": ["remote": .string(remoteToken), "voip": .string(voipToken)],
            "public_key": .string(publicKey),
            "key_id": .string(keyID),
            "created_at": .string(createdAt),
        ]
    }

    /// Reads `device.json`.
    public init(json: JSON, path: String) throws(DeviceError) {
        func field(_ key: String, in object: JSON? = nil) throws(DeviceError) -> String {
            guard let value = (object ?? json)[key]?.stringValue else {
                throw DeviceError(.corrupt, "\(path): missing or non-string \"\(key)\"")
            }
            return value
        }
        guard let format = json["format"]?.intValue else { throw DeviceError(.corrupt, "\(path): missing \"format\"") }
        guard format == DeviceConfig.formatVersion else {
            throw DeviceError(.corrupt, "\(path): container format \(format) is not supported (this build reads \(DeviceConfig.formatVersion))")
        }
        guard let tokens = json["tokens"], tokens.objectValue != nil else {
            throw DeviceError(.corrupt, "\(path): missing \"tokens\"")
        }
        self.init(
            bundleID: try field("bundle_id"), teamID: try field("team_id"), locale: try field("locale"),
            filtering: json["entitlements"]?["com.apple.developer.usernotifications.filtering"]?.boolValue ?? false,
            remoteToken: try field("remote", in: tokens), voipToken: try field("voip", in: tokens),
            publicKey: try field("public_key"), keyID: try field("key_id"), createdAt: try field("created_at"))
    }
}
