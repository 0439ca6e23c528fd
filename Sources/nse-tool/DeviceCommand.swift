import ArgumentParser
import Logging
import NSEAppRegistration
import NSECommandLine
import NSECrypto
import NSEDevice
import NSEExtensionBuild
import NSEHost
import NSEJSON
import NSEPayload
import NSESIP
import NSESystem

/// `nse device`: the emulated app install and its App Group container.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Create, inspect and change emulated devices (an app install with its App Group container).",
        subcommands: [
            Init.self, InitMany.self, Show.self, Set.self, Trust.self, Register.self, ResetVoIP.self,
            RotateKey.self, Activity.self, Keychain.self,
        ])

    /// `nse device trust`: a contact's signing key, for signed envelopes (format nse2).
    struct Trust: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust a contact's signing key: envelopes it signs as that contact are shown as verified.")

        @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
        var directory: String

        @Option(help: ArgumentHelp("The contact's address, as its messages give `from`.", valueName: "uri"))
        var contact: String

        @Option(help: ArgumentHelp("Its Ed25519 public key (base64), or its identity file.", valueName: "key|file"))
        var key: String

        @Flag(help: "Forget the contact's other keys (a key rotation done); otherwise the key is added beside them.")
        var replace = false

        func validate() throws {
            guard contact.hasPrefix("sip:") || contact.hasPrefix("sips:"), contact.count <= 256 else {
                throw ValidationError("--contact must be a sip: or sips: address")
            }
        }

        func run() throws {
            do {
                let device = try DeviceOption(device: directory).open()
                let publicKey: SigningPublicKey
                do { publicKey = try SenderIdentity.publicKey(key) } catch {
                    throw Failure(.usage, error.description)
                }
                let trust: TrustStore
                do { trust = try device.appGroup().trust } catch { throw Failure(error) }
                do throws(DeviceError) {
                    try trust.trust(publicKey.base64, for: contact, replacing: replace)
                    let keys = try trust.keys(for: contact)
                    let line: JSON = ["contact": .string(contact), "keys": .array(keys.map(JSON.string))]
                    StandardStreams.writeOut(line.serialized(.pretty) + "\n")
                } catch {
                    throw Failure(error)
                }
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a device: key pair, push tokens, entitlements, strings.")

        @Argument(help: ArgumentHelp("The container folder to create.", valueName: "dir"))
        var directory: String

        @OptionGroup var app: AppIdentityOptions

        @Option(help: "The app's locale, e.g. en or fr-FR.")
        var locale = "en"

        @OptionGroup var sip: SIPAccountOptions

        @OptionGroup var voip: VoIPOptions

        func run() throws {
            var options = app.options
            options.locale = locale
            options.sipAccount = sip.sipAccount
            options.sipProxy = sip.sipProxy
            options.sipExpires = sip.sipExpires ?? 3600
            options.sipCAFile = sip.sipCaFile
            do { options.sipPassword = try sip.password() } catch { throw error.exit() }
            do {
                var device = try Device.create(at: directory, options: options)
                if voip.isSet {
                    voip.apply(to: &device.config.voip)
                    try device.save()
                }
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch {
                throw Failure(
                    error.code == .invalidOption ? .usage : (error.code == .io ? .ioError : .config), error.description
                ).exit()
            }
        }
    }

    /// `nse device init-many`: a folder of devices for `nse serve --devices`, to serve thousands at once.
    struct InitMany: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init-many",
            abstract: "Create N devices under a folder (device-00001, …) for nse serve --devices.")

        @Argument(help: ArgumentHelp("The folder to create them in.", valueName: "dir"))
        var directory: String

        @Option(help: "How many devices (1 to 100000).")
        var count: Int

        @OptionGroup var app: AppIdentityOptions

        func validate() throws {
            guard (1...100_000).contains(count) else { throw ValidationError("--count must be between 1 and 100000") }
        }

        func run() throws {
            let options = app.options
            do throws(DeviceError) {
                // Creating a device is mostly waiting for the disk (the App Group store's sync): a few at a time.
                let created = try DeviceFolder.create(in: directory, count: count, options: options, workers: 4)
                let line: JSON = [
                    "directory": .string(FileSystem.absolute(directory)), "created": .int(created.count),
                    "first": .string(created.first), "last": .string(created.last),
                ]
                StandardStreams.writeOut(line.serialized() + "\n")
            } catch {
                throw Failure(
                    error.code == .invalidOption ? .usage : (error.code == .io ? .ioError : .config), error.description
                ).exit()
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a device as JSON (never its private key).")

        @Argument(help: ArgumentHelp("The container folder (default: the default device).", valueName: "dir"))
        var directory: String?

        func run() throws {
            do throws(Failure) {
                let device = try DeviceOption(device: directory).open()
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch {
                throw error.exit()
            }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a device's entitlements, locale, lock state, SIP account or VoIP app.")

        @Argument(help: ArgumentHelp("The container folder.", valueName: "dir"))
        var directory: String

        @Option(help: "Grant (true) or revoke (false) the filtering entitlement.")
        var filtering: Bool?

        @Option(
            help: ArgumentHelp(
                "The app's entitlements from an Xcode .entitlements file: App Groups, filtering, communication notifications, time-sensitive, critical alerts (each replaces what the device had).",
                valueName: "file"))
        var entitlements: String?

        @Option(help: "The app's locale, e.g. en or fr-FR.")
        var locale: String?

        @Option(
            help: ArgumentHelp(
                "The iOS release the device runs, e.g. 11.4 (below 12: an extension has 1 s to start).",
                valueName: "version"))
        var iosVersion: String?

        @Option(
            help: ArgumentHelp(
                "The iPhone the device is, e.g. \"iPhone X\" or iphone-5s ('none': a current one): with the release, the memory an extension may use (docs/media.md).",
                valueName: "model"))
        var model: String?

        @Option(
            parsing: .unconditional,
            help: ArgumentHelp(
                "Seconds after which a shared-core claim not refreshed is cleared (liblinphone's watchdog: 30).",
                valueName: "seconds"))
        var coreWatchdog: Double?

        @Option(
            help: ArgumentHelp(
                "Show messages only from verified senders (signed envelopes, nse2): an anonymous one becomes the loc-key fallback.",
                valueName: "bool"))
        var requireSignedSender: Bool?

        @Option(
            help: ArgumentHelp(
                "unlocked, locked (after its first unlock: an extension reads only after-first-unlock and always keychain items) or before-first-unlock (only always items); docs/device.md.",
                valueName: "state"))
        var lockState: String?

        @Option(
            help: ArgumentHelp(
                "Show Previews (Settings › Notifications): always, when-unlocked (iOS's default: a locked phone's lock screen shows only the app and \"Notification\") or never.",
                valueName: "when"))
        var showPreviews: String?

        @OptionGroup var sip: SIPAccountOptions

        @Flag(help: "Remove the device's SIP account.")
        var noSipAccount = false

        @OptionGroup var voip: VoIPOptions

        @Flag(
            help: ArgumentHelp(
                "The app is uninstalled (now): nse serve answers its tokens with 410 Unregistered. --installed undoes it."
            ))
        var uninstalled = false

        @Flag(help: "The app is installed again: its tokens are valid (undoes --uninstalled).")
        var installed = false

        @Option(
            help: ArgumentHelp(
                "nse serve POSTs each recorded result for this device to this http(s) URL ('none' removes it).",
                valueName: "url"))
        var callbackUrl: String?

        @Option(
            help: ArgumentHelp(
                "false: the device is unreachable; nse serve keeps its pushes as APNs does (the newest per app, until apns-expiration) and delivers them when it is true again.",
                valueName: "true|false"))
        var online: Bool?

        @Option(
            help: ArgumentHelp(
                "What APNs's storage does while the device is offline: apple (the default) keeps usually the newest push per app but sometimes an older one, may reorder and may drop priority 5/1 pushes, each recorded in the result; strict never does (docs/serve.md).",
                valueName: "strict|apple"))
        var apnsStore: String?

        @Option(
            help: ArgumentHelp(
                "The seed of the apple store's draws, so a run repeats ('none': one derived from the device's token).",
                valueName: "n|none"))
        var seed: String?

        func validate() throws {
            if let lockState, DeviceLockState(rawValue: lockState) == nil {
                throw ValidationError("--lock-state \(lockState): expected unlocked, locked or before-first-unlock")
            }
            if let showPreviews, NotificationPreviews(rawValue: showPreviews) == nil {
                throw ValidationError("--show-previews \(showPreviews): expected always, when-unlocked or never")
            }
            if let apnsStore, APNsStorePolicy(rawValue: apnsStore) == nil {
                throw ValidationError("--apns-store \(apnsStore): expected strict or apple")
            }
            if let seed, seed != "none", UInt64(seed) == nil {
                throw ValidationError("--seed \(seed): expected a whole number from 0 to 18446744073709551615, or none")
            }
            if let coreWatchdog, !DeviceConfig.sharedCoreWatchdogRange.contains(coreWatchdog) {
                throw ValidationError("--core-watchdog must be between 1 and 3600 seconds")
            }
            if let iosVersion, IOSVersion(iosVersion) == nil {
                throw ValidationError("--ios-version \(iosVersion): expected a release such as 17.4, 10.0 or later")
            }
            if let model, model != "none", DeviceModel(model) == nil {
                throw ValidationError(
                    "--model \(model): expected one of \(DeviceModel.all.map(\.name).joined(separator: ", ")), or none")
            }
            if uninstalled && installed { throw ValidationError("--uninstalled and --installed exclude each other") }
            if let callbackUrl, callbackUrl != "none",
                !(callbackUrl.hasPrefix("http://") || callbackUrl.hasPrefix("https://"))
            {
                throw ValidationError("--callback-url \(callbackUrl): expected an http:// or https:// URL, or 'none'")
            }
        }

        func run() throws {
            do {
                var device = try DeviceOption(device: directory).open()
                if let entitlements {
                    let granted: Entitlements
                    do { granted = try Entitlements(contentsOf: entitlements) } catch {
                        throw Failure(error.code == .missing ? .noInput : .config, error.description)
                    }
                    device.config.appGroups = granted.appGroups
                    device.config.keychainAccessGroups = granted.keychainAccessGroups(team: device.config.teamID)
                    device.config.filtering = granted.filtering
                    device.config.communication = granted.communication
                    device.config.timeSensitive = granted.timeSensitive
                    device.config.criticalAlerts = granted.criticalAlerts
                }
                if let filtering { device.config.filtering = filtering }
                if let locale { device.config.locale = locale }
                if let version = iosVersion.flatMap(IOSVersion.init) { device.config.iosVersion = version }
                if let model { device.config.model = DeviceModel(model) }
                if let model = device.config.model, let conflict = model.conflict(with: device.config.iosVersion) {
                    throw Failure(.usage, "--model/--ios-version: \(conflict)")
                }
                if let coreWatchdog { device.config.sharedCoreWatchdog = coreWatchdog }
                if let requireSignedSender { device.config.requireSignedSender = requireSignedSender }
                if uninstalled { device.config.uninstalledAt = SystemClock.unixMilliseconds() }
                if installed { device.config.uninstalledAt = nil }
                if let callbackUrl { device.config.callbackURL = callbackUrl == "none" ? nil : callbackUrl }
                if let online { device.config.online = online }
                if let store = apnsStore.flatMap(APNsStorePolicy.init(rawValue:)) { device.config.apnsStore = store }
                if let seed { device.config.apnsStoreSeed = UInt64(seed) }
                if let state = lockState.flatMap(DeviceLockState.init(rawValue:)) { device.config.lockState = state }
                if let previews = showPreviews.flatMap(NotificationPreviews.init(rawValue:)) {
                    device.config.showPreviews = previews
                }
                voip.apply(to: &device.config.voip)
                if let conflict = device.config.releaseConflict { throw Failure(.usage, conflict) }
                if noSipAccount {
                    device.config.sip = nil
                    do { try FileSystem.remove(device.sipPasswordPath) } catch {
                        throw Failure(.ioError, error.description)
                    }
                } else if sip.sipAccount != nil || sip.sipProxy != nil || sip.sipExpires != nil || sip.hasPassword
                    || sip.sipCaFile != nil
                {
                    guard let aor = sip.sipAccount ?? device.config.sip?.aor else {
                        throw Failure(.usage, "--sip-proxy, --sip-password and --sip-expires need a --sip-account")
                    }
                    do {
                        try device.setSIPAccount(
                            aor: aor,
                            proxy: sip.sipProxy ?? device.config.sip?.proxy ?? "sip:"
                                + (aor.split(separator: "@").last.map(String.init) ?? aor),
                            password: try sip.password(), expires: sip.sipExpires ?? device.config.sip?.expires ?? 3600,
                            caFile: sip.sipCaFile)
                    } catch let error as DeviceError {
                        throw Failure(error.code == .invalidOption ? .usage : .config, error.description)
                    }
                }
                do { try device.save() } catch { throw Failure(error) }
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }
}

/// The app a new device has installed, for `device init` and `device init-many`.
struct AppIdentityOptions: ParsableArguments {
    @Option(help: "The app's bundle id.")
    var bundleID = "org.example.app"

    @Option(help: "The Apple team id (10 characters).")
    var teamID = "ABCDE12345"

    @Flag(help: "Grant the com.apple.developer.usernotifications.filtering entitlement.")
    var filtering = false

    var options: Device.Options {
        var options = Device.Options()
        options.bundleID = bundleID
        options.teamID = teamID
        options.filtering = filtering
        return options
    }
}

/// The VoIP options of `device init` and `device set`: the app side of the call-report path.
struct VoIPOptions: ParsableArguments {
    /// A handler command with its relative paths made absolute against `directory`, where the user typed them: the
    /// handler runs later, from wherever `nse run` or `nse serve` runs. A word is a path when it starts with `./`
    /// or `../`, or names a file that exists there; URLs, `builtin` and commands found on PATH are left as they are.
    /// A command with quotes is left whole (its words cannot be split without a shell).
    static func resolvingPaths(_ command: String, against directory: String) -> String {
        if case .command = VoIPSettings.handler(from: command), !command.contains("\""), !command.contains("'") {
            return command.split(separator: " ", omittingEmptySubsequences: false).map { word in
                guard !word.isEmpty, !word.hasPrefix("/"), !word.hasPrefix("-") else { return String(word) }
                let path = Path.normalize(Path.join(directory, String(word)))
                let relative = word.hasPrefix("./") || word.hasPrefix("../") || FileSystem.exists(path)
                return relative ? path : String(word)
            }.joined(separator: " ")
        }
        return command
    }

    @Option(
        help: ArgumentHelp(
            "What iOS launches for a VoIP payload: a command (payload JSON on stdin, call report on stdout), an http(s) URL (payload POSTed, report in the answer), or 'builtin'.",
            valueName: "cmd|url"))
    var appHandler: String?

    @Option(
        help: ArgumentHelp(
            "What the app reports calls through, and the extension hands call offers to: callkit (default) or livecommunicationkit (lck; iOS 17.4 or later).",
            valueName: "framework"))
    var voipFramework: String?

    @Option(help: ArgumentHelp("Seconds the app has to report the call (default 5).", valueName: "seconds"))
    var appDeadline: Double?

    @Option(
        help: ArgumentHelp(
            "Failures after which VoIP payloads are no longer delivered to the app (default 3).", valueName: "n"))
    var maxStrikes: Int?

    @Option(
        help: ArgumentHelp(
            "Call offers older than this are shown as missed calls instead of ringing (default 30).",
            valueName: "seconds"))
    var maxOfferAge: Double?

    @Option(
        help: ArgumentHelp(
            "What the user does when the phone rings: answer, decline (603), busy (486), ignore, or answer-before-invite (accepts in CallKit before the INVITE comes).",
            valueName: "action"))
    var callAction: String?

    @Option(
        help: ArgumentHelp(
            "Seconds from the first ring to the user's answer or decline (default 1).", valueName: "seconds"))
    var answerAfter: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds the app waits for the INVITE after reporting the call; then it ends the call as failed (default 10).",
            valueName: "seconds"))
    var inviteTimeout: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds the user stays in an answered call before hanging up, if the caller has not (default 5).",
            valueName: "seconds"))
    var hangupAfter: Double?

    var isSet: Bool {
        appHandler != nil || voipFramework != nil || appDeadline != nil || maxStrikes != nil || maxOfferAge != nil
            || callAction != nil
            || answerAfter != nil || inviteTimeout != nil || hangupAfter != nil
    }

    func validate() throws {
        if let appDeadline, !(appDeadline > 0 && appDeadline <= 600) {
            throw ValidationError("--app-deadline must be between 0 and 600 seconds")
        }
        if let maxStrikes, !(1...1000).contains(maxStrikes) {
            throw ValidationError("--max-strikes must be between 1 and 1000")
        }
        if let maxOfferAge, !(maxOfferAge >= 0) { throw ValidationError("--max-offer-age must be 0 or more seconds") }
        if let voipFramework, VoIPFramework(option: voipFramework) == nil {
            throw ValidationError("--voip-framework \(voipFramework): expected callkit or livecommunicationkit")
        }
        if let appHandler, appHandler.allSatisfy({ $0 == " " }) {
            throw ValidationError("--app-handler needs a command or a URL")
        }
        if let callAction, CallSettings.Action(rawValue: callAction) == nil {
            throw ValidationError("--call-action must be \(CallSettings.Action.jsonKind)")
        }
        func seconds(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
        for (option, value, range) in [
            ("--answer-after", answerAfter, CallSettings.answerAfterRange),
            ("--invite-timeout", inviteTimeout, CallSettings.inviteTimeoutRange),
            ("--hangup-after", hangupAfter, CallSettings.hangupAfterRange),
        ] {
            if let value, !range.contains(value) {
                throw ValidationError(
                    "\(option) must be between \(seconds(range.lowerBound)) and \(seconds(range.upperBound)) seconds")
            }
        }
    }

    func apply(to settings: inout VoIPSettings) {
        if let appHandler {
            let resolved = Self.resolvingPaths(appHandler, against: FileSystem.currentDirectory())
            settings.appHandler = VoIPSettings.handler(from: resolved)
        }
        if let framework = voipFramework.flatMap(VoIPFramework.init(option:)) { settings.framework = framework }
        if let appDeadline { settings.appDeadline = appDeadline }
        if let maxStrikes { settings.maxStrikes = maxStrikes }
        if let maxOfferAge { settings.maxOfferAge = maxOfferAge }
        if let action = callAction.flatMap(CallSettings.Action.init(rawValue:)) { settings.call.action = action }
        if let answerAfter { settings.call.answerAfter = answerAfter }
        if let inviteTimeout { settings.call.inviteTimeout = inviteTimeout }
        if let hangupAfter { settings.call.hangupAfter = hangupAfter }
    }
}

/// The SIP account options of `device init` and `device set`.
struct SIPAccountOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The app's SIP address of record, e.g. sip:bob@example.org.", valueName: "uri"))
    var sipAccount: String?

    @Option(
        help: ArgumentHelp(
            "The SIP password (prefer --sip-password-file: command lines are visible to other users).",
            valueName: "password"))
    var sipPassword: String?

    @Option(help: ArgumentHelp("Read the SIP password from this file.", valueName: "file"))
    var sipPasswordFile: String?

    @Option(
        help: ArgumentHelp(
            "The registrar/proxy with its transport, e.g. 'sip:127.0.0.1:5060;transport=tcp' (default: sip:DOMAIN).",
            valueName: "uri"))
    var sipProxy: String?

    @Option(help: ArgumentHelp("Registration lifetime in seconds (default 3600).", valueName: "seconds"))
    var sipExpires: Int64?

    @Option(help: ArgumentHelp("For TLS: trust the CA certificates in this PEM file.", valueName: "file"))
    var sipCaFile: String?

    var hasPassword: Bool { sipPassword != nil || sipPasswordFile != nil }

    /// The password given, if any.
    func password() throws(Failure) -> String? {
        if let sipPassword { return sipPassword }
        guard let sipPasswordFile else { return nil }
        let bytes = try readInput(sipPasswordFile, limit: 4096)
        guard let bytes else { throw Failure(.usage, "\(sipPasswordFile): a password file is at most 4 KiB") }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: "\n\r")
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

extension DeviceCommand {
    /// `nse device reset-voip`: clears the strikes, so VoIP payloads reach the app again.
    struct ResetVoIP: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-voip",
            abstract: "Clear the app's VoIP strikes so VoIP payloads are delivered to it again.")

        @Argument(help: ArgumentHelp("The container folder (default: the default device).", valueName: "dir"))
        var directory: String?

        func run() throws {
            do {
                let device = try DeviceOption(device: directory).open()
                do {
                    let voip = try device.appGroup().voip
                    try voip.reset()
                    try voip.record(["outcome": "reset"])
                } catch { throw Failure(.ioError, error.description) }
                StandardStreams.writeOut(device.summary().serialized(.pretty) + "\n")
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }

    /// `nse device register`: the app in the foreground registers its account with its push parameters, then goes
    /// to the background (the connection closes, the binding stays on the server).
    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Register the device's SIP account with its RFC 8599 push parameters, then close (the binding stays).")

        @Argument(help: ArgumentHelp("The container folder (default: the default device).", valueName: "dir"))
        var directory: String?

        @Option(help: "Seconds to wait for the registrar.")
        var timeout: Double = 32

        func run() async throws {
            do {
                let device = try DeviceOption(device: directory).open()
                guard let account = device.config.sip else {
                    throw Failure(
                        .config,
                        "\(device.directory) has no SIP account; add one with `nse device set --sip-account URI`")
                }
                let registration: SIPRegistration
                do {
                    registration = try AppRegistration.registration(
                        for: device, account: account, password: try device.sipPassword())
                } catch let error as DeviceError { throw Failure(error) } catch { throw Failure(.config, "\(error)") }
                let agent = SIPUserAgent(
                    configuration: AppRegistration.configuration(for: account), logger: Logger(label: "nse.register"))
                let outcome = await withTimeout(timeout) { try await agent.register(registration) }
                await agent.close()
                switch outcome {
                case .success(let result):
                    let json: JSON = [
                        "aor": .string(account.aor), "proxy": .string(account.proxy),
                        "status": .int(Int64(result.statusCode)),
                        "reason": .string(result.reasonPhrase), "expires": JSON.int(result.expires),
                        "contact": .string(result.contact.description),
                    ]
                    StandardStreams.writeOut(json.serialized(.pretty) + "\n")
                    if !(200..<300).contains(result.statusCode) {
                        throw Failure(.ioError, "the registrar answered \(result.statusCode) \(result.reasonPhrase)")
                    }
                case .failure(let error):
                    throw Failure(.ioError, "register failed: \(error)")
                case nil:
                    throw Failure(.ioError, "register failed: no answer within \(timeout) s")
                }
            } catch let failure as Failure {
                throw failure.exit()
            }
        }
    }
}

extension DeviceOption {
    init(device: String?) {
        self.init()
        self.device = device
    }
}
