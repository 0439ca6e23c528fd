import NSECrypto
public import NSEDevice
public import NSEHost
public import NSEJSON
public import NSEPayload
import NSESystem

/// One replay case, read from a JSON file (format: docs/replay.md, schema: docs/replay-case.schema.json).
public struct ReplayCase: Sendable {
    public var name: String
    public var file: String
    public var document: JSONObject

    /// The device the case runs on.
    public struct DeviceSpec: Sendable {
        public var bundleID = "org.example.app"
        public var teamID = "ABCDE12345"
        public var filtering = false
        public var locale = "en"
        public var strings: [String: String] = [:]
        public var localeStrings: [String: String] = [:]
        public var appHandler: String?
        public var appDeadline: Double?
        public var maxStrikes: Int?
        public var maxOfferAge: Double?
        public var strikes = 0
        public var keyMode: Int?
        /// What the device's user and app do with a call (`device.call`, as `voip.call` in device.json).
        public var call: CallSettings?
        public var iosVersion: IOSVersion?
        /// The iPhone it is (`device.model`): with the release, the memory an extension may use.
        public var model: DeviceModel?
        /// What the app reports calls through (`device.voip_framework`, as `voip.framework` in device.json).
        public var voipFramework: VoIPFramework?
        public var coreWatchdog: Double?
        /// The senders the device trusts: for each contact, the names of the identities whose keys it trusts.
        public var trust: [String: [String]] = [:]
        public var requireSignedSender = false
        /// An Xcode `.entitlements` file the app has (`device.entitlements`, relative to the case): app groups,
        /// filtering, communication, time-sensitive, critical alerts. `filtering` adds to it.
        public var entitlements: String?
        /// The same given inline (`device.entitlements` as an object, as `nse serve --record` writes it).
        public var grants: Grants?
        /// Unlocked, locked or before its first unlock (`device.lock_state`): which keychain items the extension reads.
        public var lockState: DeviceLockState?
        /// Show Previews (`device.show_previews`): whether a locked phone's lock screen shows the content.
        public var showPreviews: NotificationPreviews?
        /// Generic passwords the app kept in the keychain before the push (`device.keychain`).
        public var keychain: [KeychainSeed] = []
        /// The device's private key by reference (`device.key_file`: a device's `keys/private.key`, relative to the
        /// case): a recorded case's sealed content opens with the key it was sealed to, which the case never holds.
        public var keyFile: String?
    }

    /// A generic password the app kept: `{"service", "account", "access_group", "accessible", "data_file"}`, or
    /// `"device_key": true` for the device's `keys/private.key` as the app keeps it at sign-in (a secret is never in
    /// the case itself). `access_group` defaults to the app's first; `accessible` to Apple's, `when-unlocked`.
    public struct KeychainSeed: Sendable {
        public enum Secret: Sendable {
            case file(String)
            case deviceKey
        }

        public var service: String?
        public var account: String?
        public var accessGroup: String?
        /// `kSecAttrAccessible`'s code (`ck`).
        public var accessible = "ak"
        public var secret: Secret
    }

    /// What an app is entitled to, inline: `{"app_groups": [...], "keychain_access_groups": [...], "filtering": …,
    /// "communication": …, "time_sensitive": …, "critical_alerts": …}`.
    public struct Grants: Sendable {
        public var appGroups: [String] = []
        /// As the entitlement lists them (`$(AppIdentifierPrefix)` is filled in with the device's team).
        public var keychainAccessGroups: [String] = []
        public var filtering = false
        public var communication = false
        public var timeSensitive = false
        public var criticalAlerts = false
    }

    /// The App Group store as a recorded push met it (`app_group`): the messages it held, bodies as received, the
    /// Call-IDs already shown (`by`: `extension` or `app`), and the chat rooms the app had joined (`rooms`:
    /// `{"address", "subject", "participants"}`).
    public struct AppGroupSpec: Sendable {
        public var held: [StoredMessage] = []
        public var shown: [(callID: String, by: MessageStore.Viewer)] = []
        public var rooms: [(address: String, subject: String, participants: [String])] = []
    }

    /// A call the case's caller places through the embedded SIP server before the push (`sip.call`): the server
    /// holds it for the device, and the push wakes the app that takes it.
    public struct CallSpec: Sendable {
        /// When the push is delivered.
        public enum PushWhen: String, Sendable {
            /// Once the server holds the INVITE.
            case held
            /// Once the caller has given up and the server has ended the held call (487).
            case cancelled
        }

        public var callID: String
        public var from = "sip:alice@example.org"
        public var displayName: String?
        public var video = false
        public var cancelAfter: Double?
        public var hangupAfter: Double = 1
        public var timeout: Double = 10
        public var pushWhen = PushWhen.held
    }

    /// A message the embedded SIP server holds before the push.
    public struct HeldMessage: Sendable {
        public var callID: String
        public var text: String?
        public var plaintext: JSON?
        public var sealed: Bool
        public var cpim: Bool
        public var from: String
        /// The sender identity that signs it (format nse2), by name.
        public var signWith: String?
        /// The MESSAGE's Content-Type and body exactly as a server held it (`content_type` with `body`,
        /// `body_base64` or `redacted_bytes`: `nse sip-server --record`), sent as they are instead of `text`.
        public var raw: (contentType: String, body: [UInt8])? = nil
    }

    /// The embedded SIP server's scenario.
    public struct SIPSpec: Sendable {
        public var transport = "tcp"
        public var password: String?
        public var serverPassword: String?
        public var register = true
        public var held: [HeldMessage] = []
        public var faults: JSONObject = [:]
        public var stopBeforePush = false
        public var storePrefill: [HeldMessage] = []
        public var call: CallSpec?
        /// A recorded exchange (`sip.script`), played by a scripted peer instead of the embedded server.
        public var script: SIPScript?
    }

    public var device = DeviceSpec()
    public var appGroup = AppGroupSpec()
    /// What happens, in order: the case's one push, or the `steps` it lists.
    public var steps: [Step] = []
    /// The case lists `steps` (a sequence of pushes and waits) rather than one push.
    public var isSequence = false
    /// A fresh extension process for every push, or one kept warm between them (`extension_process`; default: the
    /// `nse replay` option), evicted after `warm_idle` seconds idle.
    public var extensionProcess: ExtensionProcessPool.Mode?
    public var warmIdle: Double?
    public var sip: SIPSpec?
    public var budget: Double = 5
    public var grace: Double = 0.5
    /// MB; nil: the device's (its iOS release and model).
    public var memoryLimit: Double?
    public var extensionCommand: String?
    /// An extension's Swift sources (`extension_source`: folders or files, relative to the case), built by
    /// `nse extension build` before the run; absolute paths.
    public var extensionSource: [String]?
    /// What iOS 26.4 tells the app with a voip push (`PKVoIPPushMetadata.mustReport`; `must_report`).
    public var mustReport = true

    /// One step of a case.
    public enum Step: Sendable {
        /// A push and what its result must show.
        case push(PushStep)
        /// A pause in real time, in seconds (an idle warm process may be evicted meanwhile).
        case wait(Double)
        /// The main app (`nse app`) comes to the foreground, goes to the background, or is killed.
        case app(AppStep)
        /// Alice sends one more message through the case's SIP server (as `sip.held` gives them).
        case send(HeldMessage)
        /// The case's SIP server stops and starts again on the same port and database (what it held is kept).
        case serverRestart
    }

    /// Whether a step restarts the SIP server (its state then lives in a database in the case's folder).
    public var restartsServer: Bool {
        steps.contains {
            if case .serverRestart = $0 { true } else { false }
        }
    }

    /// What the main app does at a step.
    public struct AppStep: Sendable {
        public enum Action: String, Sendable {
            /// `nse app` starts: it takes the shared core and registers (the step waits until it has, unless
            /// `delay` puts it off: then it comes that many seconds later, during the next steps).
            case foreground
            /// SIGTERM: to the background; `expect` may say which messages it showed (`shown_in_app`, Call-IDs in
            /// order) and its exit status (`exit`).
            case background
            /// SIGKILL: it dies holding the core, which only the watchdog clears.
            case kill
        }

        public var action: Action
        public var delay: Double?
        public var expect: JSONObject?
    }

    /// A push: its payload, as a case gives it, and the expectations on its result.
    public struct PushStep: Sendable {
        /// The case file (payload files are read from its folder).
        public var file: String
        public var pushType = "alert"
        public var payloadText: String?
        public var payloadBytes: [UInt8]?
        public var payloadFile: String?
        public var seal: JSON?
        /// The APNs request headers the push came with (`headers`: `apns-collapse-id` becomes the request's
        /// identifier, as `nse serve` makes it; the others are kept as recorded).
        public var headers: [String: String] = [:]
        public var expect: JSONObject = [:]

        /// The push's `apns-collapse-id`, if it had one.
        public var collapseID: String? { headers["apns-collapse-id"] }
    }

    /// The pushes, in order.
    public var pushes: [PushStep] {
        steps.compactMap {
            if case .push(let push) = $0 { push } else { nil }
        }
    }

    /// Reads and checks a case file; errors name the file and the field.
    public static func load(_ path: String) throws(ReplayError) -> ReplayCase {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFile(path, limit: 1024 * 1024) } catch {
            throw ReplayError(file: path, field: nil, message: error.description)
        }
        guard let bytes else { throw ReplayError(file: path, field: nil, message: "larger than 1 MiB") }
        return try parse(bytes, file: path)
    }

    /// Reads and checks a case from its bytes (`file` names it in errors and anchors its relative paths): what
    /// `load` does after reading, and what the `replay-case` fuzz target feeds.
    public static func parse(_ bytes: [UInt8], file: String) throws(ReplayError) -> ReplayCase {
        let json: JSON
        do { json = try JSON.parse(bytes, options: JSONParseOptions(maxDepth: 32)) } catch {
            throw ReplayError(file: file, field: nil, message: error.description)
        }
        guard let object = json.objectValue else {
            throw ReplayError(file: file, field: nil, message: "a case is a JSON object, not a \(json.typeName)")
        }
        return try ReplayCase(object, file: file)
    }

    init(_ object: JSONObject, file: String) throws(ReplayError) {
        func fail(_ field: String, _ message: String) -> ReplayError {
            ReplayError(file: file, field: field, message: message)
        }
        func string(_ value: JSON?, _ field: String) throws(ReplayError) -> String? {
            guard let value, !value.isNull else { return nil }
            guard let text = value.stringValue else { throw fail(field, "must be a string, not a \(value.typeName)") }
            return text
        }
        func number(_ value: JSON?, _ field: String) throws(ReplayError) -> Double? {
            guard let value, !value.isNull else { return nil }
            guard let number = value.doubleValue else { throw fail(field, "must be a number, not a \(value.typeName)") }
            return number
        }
        func bool(_ value: JSON?, _ field: String) throws(ReplayError) -> Bool? {
            guard let value, !value.isNull else { return nil }
            guard let flag = value.boolValue else {
                throw fail(field, "must be true or false, not a \(value.typeName)")
            }
            return flag
        }
        func strings(_ value: JSON?, _ field: String) throws(ReplayError) -> [String: String] {
            guard let value, !value.isNull else { return [:] }
            guard let object = value.objectValue else { throw fail(field, "must be an object of strings") }
            var result: [String: String] = [:]
            for (key, entry) in object {
                guard let text = entry.stringValue else { throw fail("\(field).\(key)", "must be a string") }
                result[key] = text
            }
            return result
        }
        func keychainSeed(_ entry: JSON, _ field: String) throws(ReplayError) -> KeychainSeed {
            guard let item = entry.objectValue else { throw fail(field, "must be an object") }
            let keys: Set<String> = ["service", "account", "access_group", "accessible", "data_file", "device_key"]
            for key in item.keys where !keys.contains(key) { throw fail("\(field).\(key)", "is not a keychain field") }
            let dataFile = try string(item["data_file"], "\(field).data_file")
            let deviceKey = try bool(item["device_key"], "\(field).device_key") ?? false
            let secret: KeychainSeed.Secret
            switch (dataFile, deviceKey) {
            case (let path?, false): secret = .file(path.hasPrefix("/") ? path : Path.join(Path.dirname(file), path))
            case (nil, true): secret = .deviceKey
            default: throw fail(field, "needs data_file or \"device_key\": true, one of them")
            }
            var seed = KeychainSeed(
                service: try string(item["service"], "\(field).service"),
                account: try string(item["account"], "\(field).account"),
                accessGroup: try string(item["access_group"], "\(field).access_group"), secret: secret)
            guard seed.service != nil || seed.account != nil else { throw fail(field, "needs service or account") }
            if let named = try string(item["accessible"], "\(field).accessible") {
                guard let accessible = DeviceLockState.accessible(named: named) else {
                    throw fail("\(field).accessible", "must be a kSecAttrAccessible class, e.g. after-first-unlock")
                }
                seed.accessible = accessible
            }
            return seed
        }
        let pushKeys: Set<String> = [
            "push_type", "payload", "payload_file", "payload_raw", "payload_base64", "seal", "headers", "expect",
        ]
        let known: Set<String> = pushKeys.union([
            "name", "description", "recorded", "device", "app_group", "sip", "budget", "grace", "memory_limit",
            "extension", "must_report",
            "steps", "extension_process", "warm_idle", "extension_source",
        ])
        for key in object.keys where !known.contains(key) { throw fail(key, "is not a case field") }
        self.file = file
        self.document = object
        name = try string(object["name"], "name") ?? Path.basename(file).replacing(".json", with: "")
        if let deviceValue = object["device"] {
            guard let spec = deviceValue.objectValue else { throw fail("device", "must be an object") }
            let allowed: Set<String> = [
                "bundle_id", "team_id", "filtering", "locale", "strings", "locale_strings", "app_handler",
                "app_deadline",
                "max_strikes", "max_offer_age", "strikes", "key_mode", "call", "ios_version", "model", "core_watchdog",
                "trust",
                "require_signed_sender", "voip_framework", "entitlements", "key_file", "lock_state", "keychain",
                "show_previews",
            ]
            for key in spec.keys where !allowed.contains(key) { throw fail("device.\(key)", "is not a device field") }
            device.bundleID = try string(spec["bundle_id"], "device.bundle_id") ?? device.bundleID
            device.teamID = try string(spec["team_id"], "device.team_id") ?? device.teamID
            device.filtering = try bool(spec["filtering"], "device.filtering") ?? false
            if let inline = spec["entitlements"]?.objectValue {
                var grants = Grants()
                for (key, value) in inline {
                    let field = "device.entitlements.\(key)"
                    switch key {
                    case "app_groups", "keychain_access_groups":
                        guard let list = value.arrayValue?.compactMap(\.stringValue),
                            list.count == value.arrayValue?.count
                        else { throw fail(field, "must be a list of group identifiers") }
                        if key == "app_groups" { grants.appGroups = list } else { grants.keychainAccessGroups = list }
                    case "filtering": grants.filtering = try bool(value, field) ?? false
                    case "communication": grants.communication = try bool(value, field) ?? false
                    case "time_sensitive": grants.timeSensitive = try bool(value, field) ?? false
                    case "critical_alerts": grants.criticalAlerts = try bool(value, field) ?? false
                    default: throw fail(field, "is not an entitlement nse knows")
                    }
                }
                device.grants = grants
            } else {
                device.entitlements = try string(spec["entitlements"], "device.entitlements").map {
                    $0.hasPrefix("/") ? $0 : Path.join(Path.dirname(file), $0)
                }
            }
            device.keyFile = try string(spec["key_file"], "device.key_file").map {
                $0.hasPrefix("/") ? $0 : Path.join(Path.dirname(file), $0)
            }
            if let state = try string(spec["lock_state"], "device.lock_state") {
                guard let lockState = DeviceLockState(rawValue: state) else {
                    throw fail("device.lock_state", "must be unlocked, locked or before-first-unlock")
                }
                device.lockState = lockState
            }
            if let previews = try string(spec["show_previews"], "device.show_previews") {
                guard let showPreviews = NotificationPreviews(rawValue: previews) else {
                    throw fail("device.show_previews", "must be always, when-unlocked or never")
                }
                device.showPreviews = showPreviews
            }
            if let items = spec["keychain"] {
                guard let list = items.arrayValue else { throw fail("device.keychain", "must be a list of items") }
                device.keychain = try list.enumerated().map { index, entry throws(ReplayError) in
                    try keychainSeed(entry, "device.keychain[\(index)]")
                }
            }
            device.locale = try string(spec["locale"], "device.locale") ?? "en"
            device.strings = try strings(spec["strings"], "device.strings")
            device.localeStrings = try strings(spec["locale_strings"], "device.locale_strings")
            device.appHandler = try string(spec["app_handler"], "device.app_handler")
            device.appDeadline = try number(spec["app_deadline"], "device.app_deadline")
            device.maxStrikes = try number(spec["max_strikes"], "device.max_strikes").map { Int($0) }
            device.maxOfferAge = try number(spec["max_offer_age"], "device.max_offer_age")
            device.strikes = Int(try number(spec["strikes"], "device.strikes") ?? 0)
            device.keyMode = try string(spec["key_mode"], "device.key_mode").flatMap { Int($0, radix: 8) }
            if let call = spec["call"] {
                do { device.call = try CallSettings(json: call) } catch {
                    throw ReplayError(file: file, field: nil, message: error.inside(["device", "call"]).description)
                }
            }
            device.requireSignedSender =
                try bool(spec["require_signed_sender"], "device.require_signed_sender") ?? false
            if let trust = spec["trust"] {
                guard let contacts = trust.objectValue else { throw fail("device.trust", "must be an object") }
                for (contact, names) in contacts {
                    guard let list = names.arrayValue?.compactMap(\.stringValue), list.count == names.arrayValue?.count
                    else { throw fail("device.trust.\(contact)", "must be a list of identity names") }
                    device.trust[contact] = list
                }
            }
            device.coreWatchdog = try number(spec["core_watchdog"], "device.core_watchdog")
            if let watchdog = device.coreWatchdog, !DeviceConfig.sharedCoreWatchdogRange.contains(watchdog) {
                throw fail("device.core_watchdog", "must be from 1 to 3600 seconds")
            }
            if let version = spec["ios_version"] {
                do { device.iosVersion = try IOSVersion(json: version) } catch {
                    throw ReplayError(
                        file: file, field: nil, message: error.inside(["device", "ios_version"]).description)
                }
            }
            if let model = spec["model"] {
                do { device.model = try DeviceModel(json: model) } catch {
                    throw ReplayError(file: file, field: nil, message: error.inside(["device", "model"]).description)
                }
                if let conflict = device.model?.conflict(with: device.iosVersion ?? .current) {
                    throw fail("device.model", conflict)
                }
            }
            if let framework = spec["voip_framework"] {
                do { device.voipFramework = try VoIPFramework(json: framework) } catch {
                    throw ReplayError(
                        file: file, field: nil, message: error.inside(["device", "voip_framework"]).description)
                }
                if let framework = device.voipFramework,
                    let conflict = (device.iosVersion ?? .current).conflict(reportingThrough: framework)
                {
                    throw fail("device.voip_framework", conflict)
                }
            }
        }
        /// A message Alice sends (`sip.held`, `sip.store`, a `send` step).
        func heldMessage(_ entry: JSON, _ field: String) throws(ReplayError) -> HeldMessage {
            guard let message = entry.objectValue else { throw fail(field, "must be an object") }
            guard let callID = try string(message["call_id"], "\(field).call_id") else {
                throw fail("\(field).call_id", "is required")
            }
            let text = try string(message["text"], "\(field).text")
            let plaintext = message["plaintext"]
            var raw: (contentType: String, body: [UInt8])?
            if let contentType = try string(message["content_type"], "\(field).content_type") {
                guard text == nil, plaintext == nil else {
                    throw fail(field, "gives content_type with a body as held, or text or plaintext, not both")
                }
                switch RecordedBody.read(message) {
                case .body(let body): raw = (contentType, body)
                case .absent: throw fail(field, "with content_type needs body, body_base64 or redacted_bytes")
                case .invalid(let key, let problem): throw fail("\(field).\(key)", problem)
                }
            } else if text == nil && plaintext == nil {
                throw fail(field, "needs text or plaintext (or content_type and the body as held)")
            }
            var held = HeldMessage(
                callID: callID, text: text, plaintext: plaintext,
                sealed: try bool(message["sealed"], "\(field).sealed") ?? (plaintext != nil),
                cpim: try bool(message["cpim"], "\(field).cpim") ?? true,
                from: try string(message["from"], "\(field).from") ?? "sip:alice@example.org",
                signWith: try string(message["sign_with"], "\(field).sign_with"))
            held.raw = raw
            return held
        }
        if let sipValue = object["sip"] {
            guard let spec = sipValue.objectValue else { throw fail("sip", "must be an object") }
            let sipKeys: Set<String> = [
                "transport", "password", "server_password", "register", "stop_before_push", "held", "store", "faults",
                "call", "script",
            ]
            for key in spec.keys where !sipKeys.contains(key) { throw fail("sip.\(key)", "is not a sip field") }
            var sip = SIPSpec()
            if let script = spec["script"] {
                // The recorded exchange is the whole of what the peer does: nothing of the embedded server's.
                for key in ["held", "store", "call", "faults", "stop_before_push"] where spec[key] != nil {
                    throw fail("sip.\(key)", "cannot go with sip.script (the recorded exchange is played as it was)")
                }
                do { sip.script = try SIPScript(json: script) } catch {
                    throw fail(error.field, error.message)
                }
            }
            sip.transport = try string(spec["transport"], "sip.transport") ?? sip.script?.transportName ?? "tcp"
            guard ["udp", "tcp", "tls"].contains(sip.transport) else {
                throw fail("sip.transport", "must be udp, tcp or tls")
            }
            if let script = sip.script, script.transportName != sip.transport {
                throw fail("sip.transport", "must be the script's transport (\(script.transportName))")
            }
            sip.password = try string(spec["password"], "sip.password")
            sip.serverPassword = try string(spec["server_password"], "sip.server_password")
            sip.register = try bool(spec["register"], "sip.register") ?? true
            sip.stopBeforePush = try bool(spec["stop_before_push"], "sip.stop_before_push") ?? false
            if let faults = spec["faults"] {
                guard let object = faults.objectValue else { throw fail("sip.faults", "must be an object") }
                sip.faults = object
            }
            func messages(_ key: String) throws(ReplayError) -> [HeldMessage] {
                guard let list = spec[key] else { return [] }
                guard let array = list.arrayValue else { throw fail("sip.\(key)", "must be an array") }
                var result: [HeldMessage] = []
                for (index, entry) in array.enumerated() {
                    result.append(try heldMessage(entry, "sip.\(key)[\(index)]"))
                }
                return result
            }
            sip.held = try messages("held")
            sip.storePrefill = try messages("store")
            if let callValue = spec["call"] {
                guard let call = callValue.objectValue else { throw fail("sip.call", "must be an object") }
                let allowed: Set<String> = [
                    "call_id", "from", "display_name", "video", "cancel_after", "hangup_after", "timeout", "push_when",
                ]
                for key in call.keys where !allowed.contains(key) {
                    throw fail("sip.call.\(key)", "is not a call field")
                }
                guard let callID = try string(call["call_id"], "sip.call.call_id") else {
                    throw fail("sip.call.call_id", "is required (the INVITE's Call-ID, which the push names)")
                }
                var spec = CallSpec(callID: callID)
                spec.from = try string(call["from"], "sip.call.from") ?? spec.from
                spec.displayName = try string(call["display_name"], "sip.call.display_name")
                spec.video = try bool(call["video"], "sip.call.video") ?? false
                spec.cancelAfter = try number(call["cancel_after"], "sip.call.cancel_after")
                spec.hangupAfter = try number(call["hangup_after"], "sip.call.hangup_after") ?? spec.hangupAfter
                spec.timeout = try number(call["timeout"], "sip.call.timeout") ?? spec.timeout
                if let when = try string(call["push_when"], "sip.call.push_when") {
                    guard let moment = CallSpec.PushWhen(rawValue: when) else {
                        throw fail("sip.call.push_when", "must be held or cancelled")
                    }
                    spec.pushWhen = moment
                }
                for (field, value) in [("cancel_after", spec.cancelAfter), ("hangup_after", spec.hangupAfter)] {
                    if let value, !(0...60).contains(value) {
                        throw fail("sip.call.\(field)", "must be from 0 to 60 seconds")
                    }
                }
                guard (0.1...60).contains(spec.timeout) else {
                    throw fail("sip.call.timeout", "must be from 0.1 to 60 seconds")
                }
                sip.call = spec
            }
            self.sip = sip
        }
        if let groupValue = object["app_group"] {
            guard let group = groupValue.objectValue else { throw fail("app_group", "must be an object") }
            for key in group.keys where !["held", "shown", "rooms"].contains(key) {
                throw fail("app_group.\(key)", "is not an App Group field (held, shown, rooms)")
            }
            for (index, entry) in (group["held"]?.arrayValue ?? []).enumerated() {
                let field = "app_group.held[\(index)]"
                guard let message = entry.objectValue else { throw fail(field, "must be an object") }
                guard let callID = try string(message["call_id"], field + ".call_id") else {
                    throw fail(field + ".call_id", "is required")
                }
                let body: [UInt8]
                switch RecordedBody.read(message) {
                case .body(let bytes): body = bytes
                case .absent: throw fail(field, "needs body, body_base64 or redacted_bytes")
                case .invalid(let key, let problem): throw fail("\(field).\(key)", problem)
                }
                appGroup.held.append(
                    StoredMessage(
                        callID: callID, from: try string(message["from"], field + ".from") ?? "",
                        to: try string(message["to"], field + ".to") ?? "",
                        contentType: try string(message["content_type"], field + ".content_type") ?? "text/plain",
                        body: body, receivedAt: SystemClock.unixMilliseconds()))
            }
            for (index, entry) in (group["shown"]?.arrayValue ?? []).enumerated() {
                let field = "app_group.shown[\(index)]"
                guard let callID = try string(entry["call_id"], field + ".call_id") else {
                    throw fail(field + ".call_id", "is required")
                }
                let by = try string(entry["by"], field + ".by") ?? "extension"
                guard let viewer = MessageStore.Viewer(rawValue: by) else {
                    throw fail(field + ".by", "must be extension or app")
                }
                appGroup.shown.append((callID, viewer))
            }
            for (index, entry) in (group["rooms"]?.arrayValue ?? []).enumerated() {
                let field = "app_group.rooms[\(index)]"
                guard entry.objectValue != nil else { throw fail(field, "must be an object") }
                guard let address = try string(entry["address"], field + ".address"), address.hasPrefix("sip") else {
                    throw fail(field + ".address", "is required: the room's SIP address")
                }
                let participants = entry["participants"]?.arrayValue?.compactMap(\.stringValue) ?? []
                guard entry["participants"] == nil || participants.count == entry["participants"]?.arrayValue?.count
                else { throw fail(field + ".participants", "must be a list of addresses") }
                appGroup.rooms.append(
                    (address, try string(entry["subject"], field + ".subject") ?? "", participants))
            }
        }
        budget = try number(object["budget"], "budget") ?? 5
        grace = try number(object["grace"], "grace") ?? 0.5
        memoryLimit = try number(object["memory_limit"], "memory_limit")
        extensionCommand = try string(object["extension"], "extension")
        if let source = object["extension_source"] {
            let paths = source.stringValue.map { [$0] } ?? source.arrayValue?.compactMap(\.stringValue)
            guard let paths, !paths.isEmpty, paths.count == (source.arrayValue?.count ?? 1) else {
                throw fail("extension_source", "must be a path or a list of paths (the extension's sources)")
            }
            guard extensionCommand == nil else {
                throw fail("extension_source", "give extension or extension_source, not both")
            }
            extensionSource = paths.map { $0.hasPrefix("/") ? $0 : Path.join(Path.dirname(file), $0) }
        }
        mustReport = try bool(object["must_report"], "must_report") ?? true
        if let mode = try string(object["extension_process"], "extension_process") {
            guard let parsed = ExtensionProcessPool.Mode(rawValue: mode) else {
                throw fail("extension_process", "must be fresh or warm")
            }
            extensionProcess = parsed
        }
        warmIdle = try number(object["warm_idle"], "warm_idle")
        if let warmIdle, !(warmIdle > 0 && warmIdle <= 86400) {
            throw fail("warm_idle", "must be more than 0 and at most 86400 seconds")
        }
        /// One push: the payload keys and `expect` of `push` (the case itself, or a step), `field` prefixing names.
        func readPush(_ object: JSONObject, _ prefix: String) throws(ReplayError) -> PushStep {
            func fail(_ field: String, _ message: String) -> ReplayError {
                ReplayError(file: file, field: prefix + field, message: message)
            }
            var step = PushStep(file: file)
            step.pushType = try string(object["push_type"], prefix + "push_type") ?? "alert"
            guard ["alert", "background", "voip"].contains(step.pushType) else {
                throw fail("push_type", "must be alert, background or voip")
            }
            let payloadKeys = ["payload", "payload_file", "payload_raw", "payload_base64"].filter { object[$0] != nil }
            guard payloadKeys.count == 1 else {
                throw fail("payload", "give exactly one of payload, payload_file, payload_raw, payload_base64")
            }
            if let payload = object["payload"] {
                guard payload.objectValue != nil else {
                    throw fail("payload", "must be an object (use payload_raw for other text)")
                }
                step.payloadText = payload.serialized()
            }
            step.payloadFile = try string(object["payload_file"], prefix + "payload_file")
            if let raw = try string(object["payload_raw"], prefix + "payload_raw") { step.payloadText = raw }
            if let encoded = try string(object["payload_base64"], prefix + "payload_base64") {
                guard let decoded = Base64.decode(encoded) else { throw fail("payload_base64", "is not base64") }
                step.payloadBytes = decoded
            }
            step.headers = try strings(object["headers"], prefix + "headers")
            for name in step.headers.keys where !name.hasPrefix("apns-") {
                throw fail("headers.\(name)", "is not an APNs request header (apns-…)")
            }
            step.seal = object["seal"]
            if let seal = step.seal, seal.objectValue?["plaintext"] == nil {
                throw fail("seal.plaintext", "is required (the plaintext sealed to the device at replay time)")
            }
            if let seal = step.seal {
                _ = try string(seal["sign_with"], prefix + "seal.sign_with")
                _ = try string(seal["message_id"], prefix + "seal.message_id")
                if let tamper = try string(seal["tamper"], prefix + "seal.tamper"),
                    !["signature", "to_key"].contains(tamper)
                {
                    throw fail("seal.tamper", "must be signature or to_key")
                }
            }
            guard let expect = object["expect"]?.objectValue else {
                throw fail("expect", "is required (an object with at least outcome)")
            }
            guard expect["outcome"]?.stringValue != nil else { throw fail("expect.outcome", "is required") }
            if let problem = Expectations.problem(in: expect) { throw fail("expect." + problem.key, problem.message) }
            step.expect = expect
            return step
        }
        if let list = object["steps"] {
            for key in pushKeys where object[key] != nil {
                throw fail(key, "goes in a step of \"steps\", not beside it")
            }
            guard let array = list.arrayValue, !array.isEmpty else { throw fail("steps", "must be a list of steps") }
            isSequence = true
            for (index, entry) in array.enumerated() {
                let field = "steps[\(index)]"
                guard let stepObject = entry.objectValue else { throw fail(field, "must be an object") }
                if let action = stepObject["app"] {
                    let allowed: Set<String> = ["app", "delay", "expect"]
                    for key in stepObject.keys where !allowed.contains(key) {
                        throw fail("\(field).\(key)", "is not an app step field (app, delay, expect)")
                    }
                    guard let name = action.stringValue, let parsed = AppStep.Action(rawValue: name) else {
                        throw fail(field + ".app", "must be foreground, background or kill")
                    }
                    let delay = try number(stepObject["delay"], field + ".delay")
                    if let delay, !(0...60).contains(delay) || parsed != .foreground {
                        throw fail(field + ".delay", "is for a foreground step, from 0 to 60 seconds")
                    }
                    let expect = stepObject["expect"]?.objectValue
                    if stepObject["expect"] != nil {
                        guard let expect, parsed == .background,
                            Set(expect.keys).isSubset(of: ["shown_in_app", "exit"])
                        else { throw fail(field + ".expect", "is for a background step: shown_in_app and exit") }
                    }
                    steps.append(.app(AppStep(action: parsed, delay: delay, expect: expect)))
                    continue
                }
                if let action = stepObject["server"] {
                    guard stepObject.count == 1, action.stringValue == "restart" else {
                        throw fail(field, "a server step is {\"server\": \"restart\"}")
                    }
                    guard object["sip"] != nil else { throw fail(field, "a server step needs the case's \"sip\"") }
                    steps.append(.serverRestart)
                    continue
                }
                if let message = stepObject["send"] {
                    guard stepObject.count == 1 else { throw fail(field, "a send step has only \"send\"") }
                    guard object["sip"] != nil else { throw fail(field, "a send step needs the case's \"sip\"") }
                    steps.append(.send(try heldMessage(message, field + ".send")))
                    continue
                }
                if let wait = stepObject["wait"] {
                    guard stepObject.count == 1 else { throw fail(field, "a wait step has only \"wait\"") }
                    guard let seconds = wait.doubleValue, seconds >= 0, seconds <= 60 else {
                        throw fail(field + ".wait", "must be a number of seconds from 0 to 60")
                    }
                    steps.append(.wait(seconds))
                    continue
                }
                for key in stepObject.keys where !pushKeys.contains(key) {
                    throw fail("\(field).\(key)", "is not a step field (a push: payload and expect; wait; app; send)")
                }
                steps.append(.push(try readPush(stepObject, field + ".")))
            }
            guard !pushes.isEmpty else { throw fail("steps", "needs at least one push") }
        } else {
            steps = [.push(try readPush(object, ""))]
        }
    }
}

/// A case file that can't be used.
public struct ReplayError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var field: String?
    public var message: String
    /// One line: a field is a key of the case's JSON and may hold any character, so line breaks and other controls
    /// are written escaped, and a long one is cut.
    public var description: String {
        let text = field.map { "\(file): \(Self.printable($0)): \(message)" } ?? "\(file): \(message)"
        return Self.printable(text, limit: 4096)
    }

    static func printable(_ text: String, limit: Int = 120) -> String {
        var shown = ""
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if index == limit {
                shown += "…"
                break
            }
            switch scalar {
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            case _
            where scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) || scalar == "\u{2028}"
                || scalar == "\u{2029}":
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}
