public import NSEJSON
import NSEPayload

/// A device's identity and settings, stored as `device.json` in its container.
public struct DeviceConfig: Sendable, Equatable, JSONConvertible {
    /// The layout version of the container.
    public static let formatVersion: Int64 = 1
    public static var jsonKind: String { "an object" }

    public var bundleID: String
    public var teamID: String
    /// BCP 47 language tag for the app's strings, e.g. `en` or `fr-FR`.
    public var locale: String
    /// `com.apple.developer.usernotifications.filtering`.
    public var filtering: Bool
    /// `com.apple.security.application-groups`: the App Groups the app and its extension share
    /// (`FileManager.containerURL(forSecurityApplicationGroupIdentifier:)` answers only for these).
    public var appGroups: [String] = []
    /// `keychain-access-groups`: the keychain access groups the app and its extension share, each `TEAMID.name`
    /// (Security's `SecItem…` reach these, the App Groups, and the process's own application identifier).
    public var keychainAccessGroups: [String] = []
    /// `com.apple.developer.usernotifications.communication`: communication notifications (`updating(from:)`).
    public var communication = false
    /// `com.apple.developer.usernotifications.time-sensitive`.
    public var timeSensitive = false
    /// `com.apple.developer.usernotifications.critical-alerts`.
    public var criticalAlerts = false
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
    /// The app's SIP account, if it has one (the password lives in `keys/sip.password`).
    public var sip: SIPAccount?
    /// The app's VoIP side: its handler, deadline, strikes limit, offer age.
    public var voip = VoIPSettings()
    /// When the app was uninstalled (Unix milliseconds): APNs answers 410 `Unregistered` for its tokens since.
    public var uninstalledAt: Int64?
    /// Where `nse serve` POSTs each recorded result for this device, if anywhere.
    public var callbackURL: String?
    /// Whether the device is reachable: offline, `nse serve` keeps its pushes as APNs stores them (the newest per
    /// app, until `apns-expiration`) and delivers them when it is back (docs/serve.md, "An offline device").
    public var online = true
    /// What APNs's storage does while the device is offline: `apple` (the default) takes Apple's liberties.
    public var apnsStore = APNsStorePolicy.apple
    /// The seed of the `apple` store's draws, for runs that repeat; nil: one derived from the device's token.
    public var apnsStoreSeed: UInt64?
    /// The iOS release the device runs (rules that changed between releases follow it).
    public var iosVersion = IOSVersion.current
    /// The iPhone it is, when set: with the release, the memory an extension may use (nil: a current iPhone).
    public var model: DeviceModel?
    /// Seconds after which a shared-core claim that was not refreshed is cleared (liblinphone's watchdog: 30).
    public var sharedCoreWatchdog = 30.0
    /// Show a message only from a sender whose signature verifies (`nse device set --require-signed-sender`): an
    /// anonymous envelope is then shown as the loc-key fallback.
    public var requireSignedSender = false
    /// Unlocked, locked, or not unlocked since it started: which keychain items an extension can read.
    public var lockState = DeviceLockState.unlocked
    /// Whether the lock screen shows a notification's content (Show Previews; iOS's default: when unlocked).
    public var showPreviews = NotificationPreviews.whenUnlocked
    /// Whether the lock screen hides a notification's content now (Show Previews, with the lock state).
    public var previewsHidden: Bool { showPreviews.hidesContent(lockState) }
    /// The range `shared_core.watchdog_s` takes.
    public static let sharedCoreWatchdogRange: ClosedRange<Double> = 1...3600

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
            "entitlements": [
                "com.apple.developer.usernotifications.filtering": .bool(filtering),
                "com.apple.security.application-groups": .array(appGroups.map(JSON.string)),
                "keychain-access-groups": .array(keychainAccessGroups.map(JSON.string)),
                "com.apple.developer.usernotifications.communication": .bool(communication),
                "com.apple.developer.usernotifications.time-sensitive": .bool(timeSensitive),
                "com.apple.developer.usernotifications.critical-alerts": .bool(criticalAlerts),
            ],
            "tokens": ["remote": .string(remoteToken), "voip": .string(voipToken)],
            "public_key": .string(publicKey),
            "key_id": .string(keyID),
            "created_at": .string(createdAt),
            "sip": sip.json,
            "voip": voip.json,
            "apns": [
                "uninstalled_at": uninstalledAt.json, "callback_url": callbackURL.json, "online": .bool(online),
                "store": apnsStore.json, "store_seed": apnsStoreSeed.map { .int(Int64(bitPattern: $0)) } ?? .null,
            ],
            "ios_version": iosVersion.json,
            "model": model.json,
            "shared_core": ["watchdog_s": .double(sharedCoreWatchdog)],
            "senders": ["require_signed": .bool(requireSignedSender)],
            "lock_state": lockState.json,
            "show_previews": showPreviews.json,
        ]
    }

    /// Reads `device.json` at `path`; a member that is not what it should be makes the container corrupt, and the
    /// error names the file and the member.
    public init(json: JSON, path: String) throws(DeviceError) {
        do { try self.init(json: json) } catch { throw DeviceError(.corrupt, "\(path): \(error)") }
    }

    /// Reads the document of `device.json`.
    public init(json: JSON) throws(JSONFieldError) {
        let document = try JSONObject(json: json)
        let format: Int64 = try document.field("format")
        guard format == DeviceConfig.formatVersion else {
            throw JSONFieldError(
                path: ["format"], expected: "\(DeviceConfig.formatVersion), the container format this build reads",
                problem: .found(String(format)))
        }
        self.init(
            bundleID: try document.field("bundle_id"), teamID: try document.field("team_id"),
            locale: try document.field("locale"),
            filtering: try document.field("entitlements", "com.apple.developer.usernotifications.filtering") ?? false,
            remoteToken: try document.field("tokens", "remote"), voipToken: try document.field("tokens", "voip"),
            publicKey: try document.field("public_key"), keyID: try document.field("key_id"),
            createdAt: try document.field("created_at"))
        appGroups = try Self.strings(document, "com.apple.security.application-groups")
        keychainAccessGroups = try Self.strings(document, "keychain-access-groups")
        communication =
            try document.field("entitlements", "com.apple.developer.usernotifications.communication") ?? false
        timeSensitive =
            try document.field("entitlements", "com.apple.developer.usernotifications.time-sensitive") ?? false
        criticalAlerts =
            try document.field("entitlements", "com.apple.developer.usernotifications.critical-alerts") ?? false
        sip = try document.field("sip")
        voip = try document.field("voip") ?? VoIPSettings()
        uninstalledAt = try document.field("apns", "uninstalled_at")
        callbackURL = try document.field("apns", "callback_url")
        online = try document.field("apns", "online") ?? true
        apnsStore = try document.field("apns", "store") ?? .apple
        apnsStoreSeed = (try document.field("apns", "store_seed") as Int64?).map { UInt64(bitPattern: $0) }
        iosVersion = try document.field("ios_version") ?? .current
        model = try document.field("model")
        sharedCoreWatchdog = try document.field("shared_core", "watchdog_s") ?? 30
        requireSignedSender = try document.field("senders", "require_signed") ?? false
        lockState = try document.field("lock_state") ?? .unlocked
        showPreviews = try document.field("show_previews") ?? .whenUnlocked
        guard Self.sharedCoreWatchdogRange.contains(sharedCoreWatchdog) else {
            throw JSONFieldError(
                path: ["shared_core", "watchdog_s"], expected: "a number of seconds from 1 to 3600",
                problem: .found(String(sharedCoreWatchdog)))
        }
        if let model, let conflict = model.conflict(with: iosVersion) {
            throw JSONFieldError(
                path: ["model"], expected: "an iPhone that runs iOS \(iosVersion) (\(conflict))",
                problem: .found(model.name))
        }
        if let conflict = releaseConflict {
            throw JSONFieldError(
                path: ["voip", "framework"], expected: "a framework of iOS \(iosVersion) (\(conflict))",
                problem: .found(voip.framework.rawValue))
        }
    }

    /// An entitlement that lists strings (absent or null: none).
    private static func strings(_ document: JSONObject, _ key: String) throws(JSONFieldError) -> [String] {
        guard let value = document["entitlements"]?[key], !value.isNull else { return [] }
        guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count else {
            throw JSONFieldError(
                path: ["entitlements", key], expected: "an array of strings", problem: .found(value.typeName))
        }
        return list
    }

    /// Why the app cannot use its VoIP framework on the release the device runs (LiveCommunicationKit needs
    /// iOS 17.4), nil when it can.
    public var releaseConflict: String? { iosVersion.conflict(reportingThrough: voip.framework) }
}

/// A device's SIP account: what the app registers with.
public struct SIPAccount: Sendable, Equatable, JSONConvertible {
    /// The address of record, e.g. `sip:bob@example.org`.
    public var aor: String
    /// The outbound proxy / registrar with its transport, e.g. `sip:127.0.0.1:5060;transport=tcp`.
    public var proxy: String
    /// Registration lifetime asked for, in seconds.
    public var expires: Int64
    /// The `+sip.instance` of this install (`urn:uuid:…`).
    public var instance: String
    /// For TLS: trust the certificates in this PEM file instead of the system's.
    public var caFile: String?

    public init(aor: String, proxy: String, expires: Int64 = 3600, instance: String, caFile: String? = nil) {
        self.aor = aor
        self.proxy = proxy
        self.expires = expires
        self.instance = instance
        self.caFile = caFile
    }

    public static var jsonKind: String { "an object" }

    public var json: JSON {
        var object: JSONObject = [
            "aor": .string(aor), "proxy": .string(proxy), "expires": .int(expires), "instance": .string(instance),
        ]
        if let caFile { object["ca_file"] = .string(caFile) }
        return .object(object)
    }

    public init(json: JSON) throws(JSONFieldError) {
        let account = try JSONObject(json: json)
        self.init(
            aor: try account.field("aor"), proxy: try account.field("proxy"),
            expires: try account.field("expires") ?? 3600, instance: try account.field("instance"),
            caFile: try account.field("ca_file"))
    }

    /// Checks the URIs' shape; the SIP layer parses them fully.
    public static func validate(aor: String, proxy: String) throws(DeviceError) {
        for (name, uri) in [("--sip-account", aor), ("--sip-proxy", proxy)] {
            let lowered = uri.lowercased()
            guard lowered.hasPrefix("sip:") || lowered.hasPrefix("sips:") else {
                throw DeviceError(.invalidOption, "\(name) \"\(uri)\" is not a sip: or sips: URI")
            }
        }
        guard aor.contains("@") else {
            throw DeviceError(.invalidOption, "--sip-account \"\(aor)\" has no user part (sip:user@domain)")
        }
        if let transport = proxy.lowercased().split(separator: ";").first(where: { $0.hasPrefix("transport=") }) {
            guard ["transport=udp", "transport=tcp", "transport=tls"].contains(String(transport)) else {
                throw DeviceError(.invalidOption, "--sip-proxy transport must be udp, tcp or tls")
            }
        }
    }
}
