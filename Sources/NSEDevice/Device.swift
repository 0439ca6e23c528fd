public import NSECrypto
public import NSEJSON
public import NSEPayload
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An emulated app install: its App Group container folder, identity, keys, strings and shared state.
///
/// ```
/// DIR/device.json                      identity, tokens, entitlements, locale, public key
/// DIR/keys/private.key                 X25519 secret key, base64, mode 0600 (refused if others can read it)
/// DIR/keys/retired/<key id>.json       keys a rotation retired, kept for their grace period (``KeyRing``)
/// DIR/strings/Base.lproj/*.strings     the app's strings (Linphone defaults written at init)
/// DIR/strings/<locale>.lproj/*.strings the user's own, for the device's locale
/// DIR/store/                           the shared message store (SIP fetch)
/// DIR/keychain.db                      the keychain the app and its extension share (Security's SecItem calls)
/// DIR/locks/                           cross-process locks
/// DIR/logs/                            host logs (never plaintext)
/// ```
public struct Device: Sendable {
    /// The container folder (absolute).
    public let directory: String
    /// The identity and settings.
    public var config: DeviceConfig

    /// Options for ``create(at:options:)``.
    public struct Options: Sendable {
        public var bundleID = "org.example.app"
        public var teamID = "ABCDE12345"
        public var filtering = false
        public var locale = "en"
        public var sipAccount: String?
        public var sipPassword: String?
        public var sipProxy: String?
        public var sipExpires: Int64 = 3600
        public var sipCAFile: String?
        public init() {}
    }

    public var configPath: String { Path.join(directory, "device.json") }
    public var secretKeyPath: String { Path.join(directory, "keys", "private.key") }
    public var sipPasswordPath: String { Path.join(directory, "keys", "sip.password") }
    public var stringsDirectory: String { Path.join(directory, "strings") }
    /// The App Group store's database (`app-group.db`): messages kept for later pushes, VoIP strikes, call log.
    public var appGroupPath: String { Path.join(directory, AppGroupStore.fileName) }
    public var locksDirectory: String { Path.join(directory, "locks") }
    public var logsDirectory: String { Path.join(directory, "logs") }

    /// Opens the container's App Group store (creating it, and importing older nse versions' files, the first time).
    public func appGroup() throws(DeviceError) -> AppGroupStore {
        try AppGroupStore(containerDirectory: directory)
    }

    /// The container's App Group store as a process that lives on between pushes uses it: opened on first use and
    /// kept open for the life of the process (reopened if its file is replaced). See `AppGroupStoreCache`.
    public func cachedAppGroup() throws(DeviceError) -> AppGroupStore {
        try AppGroupStoreCache.store(containerDirectory: directory)
    }

    /// Opens the device's keychain (creating it the first time).
    public func keychain() throws(DeviceError) -> KeychainStore {
        try KeychainStore(containerDirectory: directory)
    }

    /// Creates a new container with a fresh key pair and push tokens.
    public static func create(at path: String, options: Options = Options()) throws(DeviceError) -> Device {
        try validate(options)
        let directory = FileSystem.absolute(path)
        let configPath = Path.join(directory, "device.json")
        if FileSystem.exists(configPath) {
            throw DeviceError(.alreadyExists, "\(directory) already holds a device (device.json exists)")
        }
        do {
            let keyPair = try KeyPair.generate()
            let config = DeviceConfig(
                bundleID: options.bundleID, teamID: options.teamID, locale: options.locale,
                filtering: options.filtering,
                remoteToken: try SecureRandom.hex(32), voipToken: try SecureRandom.hex(32),
                publicKey: keyPair.publicKey.base64, keyID: keyPair.publicKey.keyID,
                createdAt: SystemClock.rfc3339(unixSeconds: SystemClock.unixMilliseconds() / 1000))
            var device = Device(directory: directory, config: config)
            try FileSystem.createDirectory(directory, mode: 0o755)
            try FileSystem.createDirectory(Path.join(directory, "keys"), mode: 0o700)
            for folder in [device.locksDirectory, device.logsDirectory] {
                try FileSystem.createDirectory(folder, mode: 0o755)
            }
            try FileSystem.createDirectory(Path.join(device.stringsDirectory, "Base.lproj"), mode: 0o755)
            try FileSystem.writeAtomically(
                Path.join(device.stringsDirectory, "Base.lproj", "Localizable.strings"), Device.defaultStringsFile())
            try FileSystem.writeAtomically(device.secretKeyPath, keyPair.secretKey.exportBase64() + "\n", mode: 0o600)
            if let aor = options.sipAccount {
                try device.setSIPAccount(
                    aor: aor, proxy: options.sipProxy ?? Device.defaultProxy(for: aor), password: options.sipPassword,
                    expires: options.sipExpires, caFile: options.sipCAFile)
            }
            try device.save()
            // The App Group store exists from the install on, as the container does on a phone: the first push then
            // pays no schema creation.
            _ = try device.appGroup()
            return device
        } catch let error as SystemError {
            throw DeviceError(.io, error.description)
        } catch let error as CryptoError {
            throw DeviceError(.io, error.description)
        } catch let error as DeviceError {
            throw error
        } catch {
            throw DeviceError(.io, "\(error)")
        }
    }

    /// Opens an existing container.
    public static func open(at path: String) throws(DeviceError) -> Device {
        let directory = FileSystem.absolute(path)
        let configPath = Path.join(directory, "device.json")
        guard FileSystem.exists(configPath) else {
            throw DeviceError(
                .notFound, "\(directory) is not a device (no device.json); create one with `nse device init \(path)`")
        }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(configPath, limit: 1024 * 1024) } catch {
            throw DeviceError(.unreadable, error.description)
        }
        guard let bytes else { throw DeviceError(.corrupt, "\(configPath) is larger than 1 MiB") }
        let json: JSON
        do { json = try JSON.parse(bytes) } catch { throw DeviceError(.corrupt, "\(configPath): \(error.description)") }
        return Device(directory: directory, config: try DeviceConfig(json: json, path: configPath))
    }

    /// ``open(at:)`` for a process that lives on (a warm extension): the device it read before, while its
    /// `device.json` is unchanged (``DeviceCache``).
    public static func cached(at path: String) throws(DeviceError) -> Device {
        try DeviceCache.device(at: path)
    }

    /// Drops every device ``cached(at:)`` kept (a fork server's rehearsal device, before it forks).
    public static func forgetCached() {
        DeviceCache.forgetAll()
    }

    /// Opens the container at `path`, creating it with default options when it does not exist yet.
    public static func openOrCreate(at path: String) throws(DeviceError) -> Device {
        if FileSystem.exists(Path.join(path, "device.json")) { return try open(at: path) }
        return try create(at: path)
    }

    /// The default container: `$NSE_DEVICE`, else `$XDG_DATA_HOME/nse/device`, else `~/.local/share/nse/device`.
    public static func defaultDirectory() -> String {
        if let explicit = Environment.get("NSE_DEVICE") { return explicit }
        if let data = Environment.get("XDG_DATA_HOME") { return Path.join(data, "nse", "device") }
        let home = Environment.get("HOME") ?? "/tmp"
        return Path.join(home, ".local", "share", "nse", "device")
    }

    /// Writes `device.json`.
    public func save() throws(DeviceError) {
        do {
            try FileSystem.writeAtomically(configPath, config.json.serialized(.pretty) + "\n")
        } catch {
            throw DeviceError(.io, error.description)
        }
    }

    /// Checks, without keeping anything, that the files the extension will read are usable: the private key
    /// (present, owner-only, a key), the retired keys and the SIP password if one is stored (owner-only, readable).
    /// The host calls it before it delivers, so that an unusable device is a configuration error rather than a
    /// fallback.
    public func checkKeys() throws(DeviceError) {
        _ = try secretKey()
        _ = try keyRing.retiredKeys()
        _ = try sipPassword()
    }

    /// Reads the current secret key, refusing a key file that anyone but the owner can read.
    public func secretKey() throws(DeviceError) -> SecretKey {
        try keyRing.currentKey()
    }

    /// The device's public key.
    public func publicKey() throws(DeviceError) -> PublicKey {
        do { return try PublicKey(base64: config.publicKey) } catch {
            throw DeviceError(.corrupt, "\(configPath): public_key: \(error.description)")
        }
    }

    /// The app's strings for the device's locale: Linphone's defaults, then `Base.lproj`, then the language
    /// (`fr.lproj`), then the full tag (`fr-FR.lproj`); later files win. Unreadable files are skipped and listed.
    ///
    /// A process that lives on (a warm extension, `nse serve`) reads and parses them again only when one of the
    /// folders or files has changed since it last did (``StringsCache``).
    public func strings() -> (table: StringsTable, problems: [String]) {
        StringsCache.strings(folders: stringsFolders)
    }

    /// The folders `strings()` reads, in order.
    var stringsFolders: [String] {
        var folders = ["Base.lproj"]
        let language = String(config.locale.split(separator: "-").first ?? "")
        if !language.isEmpty { folders.append("\(language).lproj") }
        if config.locale != language { folders.append("\(config.locale).lproj") }
        return folders.map { Path.join(stringsDirectory, $0) }
    }

    /// The `.strings` files of `folders`, in the order they apply (missing folders skipped).
    static func stringsFiles(in folders: [String]) -> [String] {
        folders.flatMap { path -> [String] in
            guard FileSystem.isDirectory(path), let names = try? FileSystem.contents(ofDirectory: path) else {
                return []
            }
            return names.filter { $0.hasSuffix(".strings") }.map { Path.join(path, $0) }
        }
    }

    /// Linphone's defaults merged with `files`, read now.
    static func strings(from files: [String]) -> (table: StringsTable, problems: [String]) {
        var table = StringsTable.linphoneDefaults
        var problems: [String] = []
        for file in files {
            do {
                guard let text = try FileSystem.readText(file, limit: 1024 * 1024) else {
                    problems.append("\(file): larger than 1 MiB")
                    continue
                }
                table = table.merging(try StringsTable(stringsFile: text))
            } catch let error as StringsFileError {
                problems.append("\(file): \(error.description)")
            } catch {
                problems.append("\(file): \(error)")
            }
        }
        return (table, problems)
    }

    /// Whether `token` is one of this device's push tokens (hex, case-insensitive).
    public func ownsToken(_ token: String) -> Bool {
        let lowered = token.lowercased()
        return lowered == config.remoteToken.lowercased() || lowered == config.voipToken.lowercased()
    }

    /// What `nse device show` prints.
    public func summary() -> JSON {
        var object = config.json.objectValue ?? JSONObject()
        object["format"] = nil
        var result: JSONObject = ["directory": .string(directory)]
        for (key, value) in object { result[key] = value }
        let (table, problems) = strings()
        result["strings"] = .object(
            JSONObject(table.entries.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSON.string($0.value)) }))
        if !problems.isEmpty { result["strings_problems"] = .array(problems.map(JSON.string)) }
        let keyMode = (try? FileSystem.permissions(secretKeyPath)).map { String($0, radix: 8) }
        result["private_key"] = ["path": .string(secretKeyPath), "mode": .string(keyMode)]
        result["keys"] = keysSummary(now: SystemClock.unixSeconds())
        result["sip_password_set"] = .bool(FileSystem.exists(sipPasswordPath))
        do throws(DeviceError) {
            let voip = try appGroup().voip
            let strikes = try voip.strikes()
            result["voip_state"] = [
                "strikes": .int(Int64(strikes)), "max_strikes": .int(Int64(config.voip.maxStrikes)),
                "delivering": .bool(strikes < config.voip.maxStrikes), "call_log": .array(try voip.callLog(limit: 20)),
            ]
        } catch {
            result["voip_state"] = ["error": .string(error.description)]
        }
        // Who runs the app's SIP core now (docs/app.md).
        var core = result["shared_core"]?.objectValue ?? JSONObject()
        do {
            core["state"] = .string(
                try appGroup().sharedCore(watchdogSeconds: config.sharedCoreWatchdog).state().rawValue)
        } catch {
            core["error"] = .string(error.description)
        }
        result["shared_core"] = .object(core)
        // Notification Center: the identifiers of what it shows for the app (newest first), the local notifications
        // it waits to show (soonest first), the badge, and the app's notification categories.
        var center: JSONObject
        do {
            let state = try notificationCenter.state()
            center = [
                "delivered": .array(state.delivered.reversed().map { .string($0.identifier) }),
                "pending": .array(state.pending.map { .string($0.identifier) }),
                "badge": state.badge.map { .int(Int64($0)) } ?? .null,
            ]
        } catch {
            center = ["error": .string(error.description)]
        }
        do {
            center["categories"] = .array(try notificationCategories.categories().map { $0["identifier"] ?? .null })
        } catch {
            center["categories"] = ["error": .string(error.description)]
        }
        result["notification_center"] = .object(center)
        // The chat rooms the app joined (a group-chat invitation's extension keeps them).
        do { result["rooms"] = .array(try appGroup().rooms.all().map(\.json)) } catch {
            result["rooms"] = ["error": .string(error.description)]
        }
        return .object(result)
    }

    /// Sets (or replaces) the SIP account; `password` nil keeps the stored one, "" removes it.
    public mutating func setSIPAccount(
        aor: String, proxy: String, password: String?, expires: Int64, caFile: String? = nil
    ) throws(DeviceError) {
        try SIPAccount.validate(aor: aor, proxy: proxy)
        guard expires > 0 && expires <= 7 * 24 * 3600 else {
            throw DeviceError(.invalidOption, "--sip-expires must be between 1 and 604800 seconds")
        }
        let instance: String
        if let existing = config.sip?.instance {
            instance = existing
        } else {
            do { instance = "urn:uuid:" + (try SecureRandom.uuid()).lowercased() } catch {
                throw DeviceError(.io, error.description)
            }
        }
        var trust = caFile ?? config.sip?.caFile
        if let file = caFile {
            guard FileSystem.exists(file) else {
                throw DeviceError(.invalidOption, "--sip-ca-file \(file): no such file")
            }
            trust = FileSystem.absolute(file)
        }
        config.sip = SIPAccount(aor: aor, proxy: proxy, expires: expires, instance: instance, caFile: trust)
        if let password {
            do {
                if password.isEmpty {
                    try FileSystem.remove(sipPasswordPath)
                } else {
                    try FileSystem.writeAtomically(sipPasswordPath, password, mode: 0o600)
                }
            } catch { throw DeviceError(.io, error.description) }
        }
    }

    /// The SIP password, if one is stored (same 0600 rule as the private key).
    public func sipPassword() throws(DeviceError) -> String? {
        guard FileSystem.exists(sipPasswordPath) else { return nil }
        return try OwnerOnlyFile.read(sipPasswordPath, what: "a password", limit: 4096) { error in
            DeviceError(.unreadable, error.description)
        }
    }

    /// `sip:DOMAIN` of an address of record, as the default proxy.
    static func defaultProxy(for aor: String) -> String {
        let domain = aor.split(separator: "@", maxSplits: 1).last.map(String.init) ?? aor
        return "sip:" + domain
    }

    static func validate(_ options: Options) throws(DeviceError) {
        func plain(_ text: String) -> Bool {
            !text.isEmpty
                && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }
        }
        guard plain(options.bundleID), options.bundleID.contains(".") else {
            throw DeviceError(
                .invalidOption, "bundle id \"\(options.bundleID)\" is not reverse-DNS (letters, digits, '.', '-')")
        }
        guard options.teamID.count == 10, options.teamID.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) })
        else {
            throw DeviceError(.invalidOption, "team id \"\(options.teamID)\" is not 10 uppercase letters or digits")
        }
        guard plain(options.locale) else {
            throw DeviceError(.invalidOption, "locale \"\(options.locale)\" is not a language tag like en or fr-FR")
        }
    }

    static func defaultStringsFile() -> String {
        var lines = ["/* The app's strings (Linphone's defaults). Add your own .strings files in <locale>.lproj/. */"]
        for (key, value) in StringsTable.linphoneDefaults.entries.sorted(by: { $0.key < $1.key }) {
            lines.append("\"\(key)\" = \"\(value)\";")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
