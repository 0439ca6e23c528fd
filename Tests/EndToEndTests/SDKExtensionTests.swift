import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Extensions written as iOS developers write them (fixtures/sdk-extensions), built by `nse extension build` and run
/// by `nse run --extension` under iOS's rules: the binaries as a user runs them, nothing in process.
@Suite(.serialized) struct SDKExtensionTests {
    /// One build cache for the whole run: each fixture is compiled once, later builds come from the cache.
    static let cache: String = {
        (try? TestSupport.temporaryDirectory("nse-sdk-cache")) ?? NSTemporaryDirectory() + "/nse-sdk-cache"
    }()

    let root: String
    let device: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-sdk")
        device = root + "/bob"
        let created = try TestSupport.nse(["device", "init", device])
        try #require(created.status == 0, "\(created.stderr)")
    }

    static func fixture(_ name: String) -> String { TestSupport.fixtures + "/sdk-extensions/" + name }

    /// `nse extension build` as a user runs it; the executable it printed last.
    static func build(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let run = try TestSupport.nse(["extension", "build"] + arguments, environment: ["NSE_CACHE_DIR": cache])
        return (run.status, run.stdout, run.stderr)
    }

    static func built(_ name: String) throws -> String {
        let run = try build([fixture(name)])
        try #require(run.status == 0, "\(name): \(run.stderr)")
        let executable = try #require(run.stdout.split(separator: "\n").last.map(String.init))
        #expect(FileManager.default.isExecutableFile(atPath: executable))
        return executable
    }

    /// An extension from one `NotificationService.swift` written here (in `root/name`), built; its executable.
    func built(source: String, in name: String, options: [String] = []) throws -> String {
        let folder = root + "/" + name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TestSupport.write(source, to: folder + "/NotificationService.swift")
        let run = try Self.build([folder, "--principal-class", "NotificationService"] + options)
        try #require(run.status == 0, "\(name): \(run.stderr)")
        return try #require(run.stdout.split(separator: "\n").last.map(String.init))
    }

    func grantEntitlements() throws {
        let set = try TestSupport.nse([
            "device", "set", device, "--entitlements", Self.fixture("App.entitlements"),
        ])
        try #require(set.status == 0, "\(set.stderr)")
    }

    func payload(_ name: String, _ json: String) throws -> String {
        let path = root + "/" + name + ".json"
        try TestSupport.write(json, to: path)
        return path
    }

    static let alert = #"{"aps":{"alert":{"title":"Alice","body":"Sealed"},"mutable-content":1}}"#

    /// `nse run` with an extension; one result per payload.
    func run(_ executable: String, _ payloads: [String], options: [String] = []) throws -> [JSON] {
        let run = try TestSupport.nse(["run", "--device", device, "--extension", executable] + options + payloads)
        #expect(run.status == 0, "\(run.stderr)")
        if payloads.count == 1 { return [try JSON.parse(run.stdout)] }
        return try run.stdout.split(separator: "\n").map { try JSON.parse(String($0)) }
    }

    func runOne(_ executable: String, _ json: String, options: [String] = []) throws -> JSON {
        try run(executable, [try payload("push", json)], options: options)[0]
    }

    // MARK: - Building

    @Test func xcodesTemplateBuildsUnchangedAndRuns() throws {
        let executable = try Self.built("template")
        let result = try runOne(executable, Self.alert)
        #expect(result["outcome"] == "rewritten", "\(result)")
        #expect(result["display"]?["title"]?.stringValue == "Alice [modified]")
        #expect(result["display"]?["body"]?.stringValue == "Sealed")
        #expect(result["extension"]?["exit"]?["code"]?.intValue == 0)
        // The same tree again: from the cache, the same executable.
        let again = try Self.build([Self.fixture("template")])
        #expect(again.status == 0)
        #expect(again.stdout.split(separator: "\n").last.map(String.init) == executable)
        #expect(again.stderr.contains("cached"), "\(again.stderr)")
        // The Swift runtime and Foundation are linked in, the executable at a fixed address (as the shared cache
        // prelinks them on iOS); and it downloads nothing, so FoundationNetworking (libcurl and its 30 libraries) is
        // not linked at all.
        let dynamic = try TestSupport.run("/usr/bin/readelf", ["-h", "-d", executable], timeout: 10)
        #expect(dynamic.stdout.contains("EXEC (Executable file)"), "\(dynamic.stdout)")
        #expect(!dynamic.stdout.contains("libswiftCore"), "\(dynamic.stdout)")
        #expect(!dynamic.stdout.contains("libFoundation"), "\(dynamic.stdout)")
        #expect(!dynamic.stdout.contains("libcurl"), "\(dynamic.stdout)")
    }

    /// What an extension downloads with Foundation alone on iOS downloads here: `URLSession` in a file that imports
    /// only Foundation, and `Data(contentsOf:)` of an http URL (which needs FoundationNetworking loaded on Linux).
    @Test func foundationDownloadsAsOnIOS() throws {
        let folder = root + "/downloads"
        try FileManager.default.createDirectory(atPath: folder + "/www", withIntermediateDirectories: true)
        try TestSupport.write("0123456789", to: folder + "/www/ten.txt")
        try TestSupport.write(
            """
            import UserNotifications
            class NotificationService: UNNotificationServiceExtension {
                override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                    let content = request.content.mutableCopy() as! UNMutableNotificationContent
                    let url = URL(string: request.content.userInfo["media-url"] as! String)!
                    let direct = (try? Data(contentsOf: url))?.count ?? -1
                    Downloader.fetch(url) { count in
                        content.body = "contentsOf \\(direct), session \\(count)"
                        contentHandler(content)
                    }
                }
            }
            """, to: folder + "/NotificationService.swift")
        try TestSupport.write(
            """
            import Foundation
            enum Downloader {
                static func fetch(_ url: URL, completion: @escaping (Int) -> Void) {
                    URLSession.shared.dataTask(with: url) { data, _, _ in completion(data?.count ?? -1) }.resume()
                }
            }
            """, to: folder + "/Downloader.swift")
        let built = try Self.build([folder, "--principal-class", "NotificationService"])
        try #require(built.status == 0, "\(built.stderr)")
        let executable = try #require(built.stdout.split(separator: "\n").last.map(String.init))
        let server = try CallCommandTests.Background(
            "/usr/bin/env",
            ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder + "/www"],
            in: root, name: "http")
        defer {
            kill(server.process.processIdentifier, SIGTERM)
            _ = server.wait(timeout: 5)
        }
        var port: Substring?
        let until = Date().addingTimeInterval(15)
        while port == nil, Date() < until {
            port = server.output.split(separator: " ").drop { $0 != "port" }.dropFirst().first
            if port == nil { usleep(50_000) }
        }
        let listening = try #require(port, "the HTTP server did not start: \(server.errors)")
        let result = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"Alice","body":"Photo"},"mutable-content":1},"media-url":"http://127.0.0.1:\#(listening)/ten.txt"}"#
        )
        #expect(result["display"]?["body"]?.stringValue == "contentsOf 10, session 10", "\(result)")

        // A target that downloads with `Data(contentsOf:)` alone, naming no type of FoundationNetworking: Foundation
        // finds it by name at run time, so the build must link it all the same (it failed with Cocoa error 262).
        let alone = try self.built(
            source:
                """
                import UserNotifications
                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        let url = URL(string: request.content.userInfo["media-url"] as! String)!
                        do { content.body = "contentsOf \\(try Data(contentsOf: url).count)" } catch { content.body = "\\(error)" }
                        contentHandler(content)
                    }
                }
                """,
            in: "contents-of")
        let aloneResult = try runOne(
            alone,
            #"{"aps":{"alert":{"title":"Alice","body":"Photo"},"mutable-content":1},"media-url":"http://127.0.0.1:\#(listening)/ten.txt"}"#
        )
        #expect(aloneResult["display"]?["body"]?.stringValue == "contentsOf 10", "\(aloneResult)")
    }

    @Test func aChangedSourceIsBuiltAgain() throws {
        let folder = root + "/changed"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let source = try String(contentsOfFile: Self.fixture("template/NotificationService.swift"), encoding: .utf8)
        try TestSupport.write(source, to: folder + "/NotificationService.swift")
        try FileManager.default.copyItem(atPath: Self.fixture("template/Info.plist"), toPath: folder + "/Info.plist")
        let first = try Self.build([folder])
        try #require(first.status == 0, "\(first.stderr)")
        try TestSupport.write(
            source.replacingOccurrences(of: "[modified]", with: "[changed]"), to: folder + "/NotificationService.swift")
        let second = try Self.build([folder])
        try #require(second.status == 0, "\(second.stderr)")
        #expect(second.stdout != first.stdout)
        #expect(!second.stderr.contains("cached"), "\(second.stderr)")
        let executable = try #require(second.stdout.split(separator: "\n").last.map(String.init))
        #expect(try runOne(executable, Self.alert)["display"]?["title"]?.stringValue == "Alice [changed]")
    }

    /// What Xcode refuses, refused with one line and 65; a path that is not there, 66; the compiler's own messages
    /// as it printed them.
    /// The cache keeps the most recently used builds (`NSE_CACHE_EXTENSIONS`, 64 by default): each edit of a tree is a
    /// new build of ~70 MB, and a user iterating on theirs would fill the disk. A limit that is not a number is a
    /// usage error.
    @Test func theCacheKeepsTheMostRecentlyUsedBuilds() throws {
        let cache = root + "/small-cache"
        let folder = root + "/iterated"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let source = try String(
            contentsOfFile: Self.fixture("template") + "/NotificationService.swift", encoding: .utf8)
        func build(_ edit: String, keeping: String) throws -> (status: Int32, executable: String, stderr: String) {
            try TestSupport.write(source + "\n// \(edit)\n", to: folder + "/NotificationService.swift")
            let run = try TestSupport.nse(
                ["extension", "build", folder, "--principal-class", "NotificationService"],
                environment: ["NSE_CACHE_DIR": cache, "NSE_CACHE_EXTENSIONS": keeping])
            return (run.status, run.stdout.split(separator: "\n").last.map(String.init) ?? "", run.stderr)
        }
        let first = try build("one", keeping: "1")
        try #require(first.status == 0, "\(first.stderr)")
        let second = try build("two", keeping: "1")
        try #require(second.status == 0, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: first.executable), "\(first.executable)")
        #expect(FileManager.default.isExecutableFile(atPath: second.executable))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/extensions").count == 1)
        // Found again, it stays; 0 keeps every build.
        let again = try build("two", keeping: "1")
        #expect(again.status == 0 && again.executable == second.executable && again.stderr.contains("cached"))
        #expect(try build("three", keeping: "0").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/extensions").count == 2)
        let bad = try build("three", keeping: "lots")
        #expect(bad.status == 64 && bad.executable.isEmpty, "\(bad.stderr)")
        #expect(
            bad.stderr
                == "nse: extension build: NSE_CACHE_EXTENSIONS must be a number of builds to keep (0: every one), not lots\n",
            "\(bad.stderr)")
    }

    @Test func buildErrorsAreOneLineWithTheirStatus() throws {
        let folder = root + "/wrong"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Self.fixture("template/NotificationService.swift"), toPath: folder + "/NotificationService.swift")
        let contentExtension = try String(contentsOfFile: Self.fixture("template/Info.plist"), encoding: .utf8)
            .replacingOccurrences(
                of: "com.apple.usernotifications.service", with: "com.apple.usernotifications.content-extension")
        try TestSupport.write(contentExtension, to: root + "/Content-Info.plist")

        let wrongPoint = try Self.build([folder, "--info-plist", root + "/Content-Info.plist"])
        #expect(wrongPoint.status == 65)
        #expect(wrongPoint.stderr.contains("not a Notification Service Extension"), "\(wrongPoint.stderr)")
        #expect(wrongPoint.stderr.split(separator: "\n").count == 1, "\(wrongPoint.stderr)")
        #expect(wrongPoint.stdout.isEmpty)

        let missingClass = try Self.build([folder, "--principal-class", "NoSuchService"])
        #expect(missingClass.status == 65)
        #expect(
            missingClass.stderr.contains("NoSuchService is declared in none of the Swift files"),
            "\(missingClass.stderr)")

        let noPrincipal = try Self.build([folder])
        #expect(noPrincipal.status == 65)
        #expect(noPrincipal.stderr.contains("no principal class"), "\(noPrincipal.stderr)")

        try TestSupport.write(
            """
            import UserNotifications
            class NotificationService: UNNotificationServiceExtension {
                override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                    contentHandler(request.content.notThere)
                }
            }
            """, to: folder + "/NotificationService.swift")
        let compileError = try Self.build([folder, "--principal-class", "NotificationService"])
        #expect(compileError.status == 65)
        #expect(
            compileError.stderr.contains("error: value of type 'UNNotificationContent' has no member 'notThere'"),
            "\(compileError.stderr)")
        #expect(compileError.stderr.contains("swiftc could not build the extension"))
        #expect(compileError.stdout.isEmpty)

        let missing = try Self.build([root + "/no-such-folder"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("no such file or folder"), "\(missing.stderr)")
    }

    // MARK: - Running under iOS's rules

    @Test func theBestAttemptGoesOutWhenTimeIsUpAndLogsKeepPrivateValuesPrivate() throws {
        let executable = try Self.built("best-attempt")
        let result = try runOne(executable, Self.alert, options: ["--budget", "0.5"])
        #expect(result["outcome"] == "fallback", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("time-will-expire: best attempt delivered") == true)
        #expect(result["display"]?["body"]?.stringValue == "Best attempt")
        #expect(result["extension"]?["time_will_expire_sent"] == true)
        // os.log: the request id marked public shows, the body (private by default) does not.
        let log = try #require(result["extension"]?["stderr"]?.stringValue)
        let id = try #require(result["request_id"]?.stringValue)
        #expect(log.contains("org.example.app.nse/push default: received \(id), body <private>"), "\(log)")
        #expect(log.contains("org.example.app.nse/push error: time will expire"), "\(log)")
        #expect(!log.contains("Sealed"))
        // print() goes to the log too, never into the protocol (a long line there was a protocol error).
        #expect(log.contains("NotificationService: didReceive \(id)\n"), "\(log)")
    }

    /// App Group state shared by processes and pushes, a new principal instance per request in a warm process.
    @Test func aWarmProcessServesThreePushesWithAnInstanceEachAndTheAppGroupRemembers() throws {
        try grantEntitlements()
        let executable = try Self.built("app-group-counter")
        let payloads = try (1...3).map { try payload("push-\($0)", Self.alert) }
        let warm = try run(executable, payloads, options: ["--extension-process", "warm"])
        try #require(warm.count == 3)
        for (index, result) in warm.enumerated() {
            let number = index + 1
            #expect(result["outcome"] == "rewritten", "\(result)")
            #expect(result["display"]?["body"]?.stringValue == "Push number \(number)")
            #expect(
                result["display"]?["subtitle"]?.stringValue
                    == "instance \(number), its push 1, process push \(number)")
            #expect(result["extension"]?["process"]?.stringValue == (index == 0 ? "fresh" : "warm"))
        }
        // A new process: UserDefaults of the group and the container file carry on.
        let fresh = try runOne(executable, Self.alert)
        #expect(fresh["display"]?["body"]?.stringValue == "Push number 4")
        #expect(fresh["display"]?["subtitle"]?.stringValue == "instance 1, its push 1, process push 1")
        let log = try String(
            contentsOfFile: device + "/AppGroups/group.org.example.app/pushes.log", encoding: .utf8)
        #expect(log == "push 1\npush 2\npush 3\npush 4\n")
    }

    @Test func aGroupTheEntitlementsDoNotListHasNoContainer() throws {
        let executable = try Self.built("app-group-counter")
        let result = try runOne(executable, Self.alert)
        #expect(result["display"]?["body"]?.stringValue == "no app group", "\(result)")
        #expect(!FileManager.default.fileExists(atPath: device + "/AppGroups/group.org.example.app"))
    }

    @Test func attachmentsAreKeptOrRefusedWithApplesErrors() throws {
        let executable = try Self.built("attachments")
        func attach(_ bytes: Int, name: String = "picture.png") throws -> JSON {
            try runOne(
                executable,
                #"{"aps":{"alert":{"title":"Pic","body":"x"},"mutable-content":1},"image-bytes":\#(bytes),"file-name":"\#(name)"}"#
            )
        }
        let good = try attach(4096)
        #expect(good["display"]?["body"]?.stringValue == "With a picture (public.png)", "\(good)")
        let attachment = try #require(good["attachments"]?.arrayValue?.first)
        #expect(attachment["identifier"]?.stringValue == "picture")
        #expect(attachment["type"]?.stringValue == "public.png")
        #expect(attachment["size"]?.intValue == 4096)
        let path = try #require(attachment["path"]?.stringValue)
        #expect(path.hasPrefix(device + "/attachments/"))
        #expect((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) == 4096)

        // Over the 10 MB an image may have: UNErrorCodeAttachmentInvalidFileSize.
        let large = try attach(10 * 1024 * 1024 + 1)
        #expect(large["display"]?["body"]?.stringValue == "No picture: UNError 102", "\(large)")
        #expect(large["attachments"] == nil || large["attachments"] == .null)
        // A type iOS does not attach: UNErrorCodeAttachmentUnrecognizedType.
        let unknown = try attach(64, name: "notes.xyz")
        #expect(unknown["display"]?["body"]?.stringValue == "No picture: UNError 101", "\(unknown)")
    }

    @Test func aCommunicationNotificationNeedsItsEntitlement() throws {
        let executable = try Self.built("communication")
        let plain = try runOne(executable, Self.alert)
        #expect(plain["outcome"] == "rewritten", "\(plain)")
        #expect(plain["display"]?["body"]?.stringValue == "Lunch at 1?")
        #expect(plain["communication"] == nil || plain["communication"] == .null)
        #expect(
            plain["warnings"]?.arrayValue?.first?.stringValue?.contains(
                "lacks com.apple.developer.usernotifications.communication")
                == true, "\(plain)")

        // The avatar the SDK wrote for the host is not left behind.
        let scratch = (try? FileManager.default.subpathsOfDirectory(atPath: device + "/tmp/extension")) ?? []
        #expect(scratch.isEmpty, "\(scratch)")

        try grantEntitlements()
        let result = try runOne(executable, Self.alert)
        let communication = try #require(result["communication"])
        #expect(communication["intent"]?.stringValue == "INSendMessageIntent", "\(result)")
        #expect(communication["sender_name"]?.stringValue == "Alice")
        #expect(communication["sender_handle"]?.stringValue == "sip:alice@example.org")
        #expect(communication["has_avatar"] == true)
        #expect(communication["conversation_identifier"]?.stringValue == "conversation-1")
        let avatar = try #require(communication["avatar_path"]?.stringValue)
        #expect(FileManager.default.fileExists(atPath: avatar))
        #expect(result["warnings"] == .array([]))
    }

    /// iOS 14.5's CXProvider.reportNewIncomingVoIPPushPayload: refused without the filtering entitlement
    /// (CXErrorCodeNotificationServiceExtensionError 2, missingNotificationFilteringEntitlement), else the call goes
    /// to the app and nothing is shown.
    @Test func aCallOfferReportedThroughCallKitGoesToTheApp() throws {
        let executable = try Self.built("callkit")
        let offer =
            #"{"aps":{"alert":{"title":"Call","body":"x"},"mutable-content":1},"call":{"call_id":"c1","from":"sip:alice@example.org","display_name":"Alice"}}"#
        let refused = try runOne(executable, offer)
        #expect(refused["display"]?["body"]?.stringValue == "Call not reported: 2", "\(refused)")
        #expect(refused["call_report"] == nil || refused["call_report"] == .null)

        try grantEntitlements()
        let result = try runOne(executable, offer)
        #expect(result["outcome"] == "suppressed", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("voip-escalated:") == true)
        #expect(result["call_report"]?["localized_caller_name"]?.stringValue == "Alice")
        #expect(result["call_report"]?["remote_handle"]?["value"]?.stringValue == "sip:alice@example.org")
        #expect(result["display"] == nil || result["display"] == .null)
    }

    @Test func aCrashShowsTheOriginal() throws {
        let result = try runOne(try Self.built("crash"), Self.alert)
        #expect(result["outcome"] == "original", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("extension-crashed:") == true)
        #expect(result["display"]?["body"]?.stringValue == "Sealed")
    }

    @Test func aMemoryHogIsKilledAtTheLimit() throws {
        let result = try runOne(try Self.built("memory-hog"), Self.alert)
        #expect(result["outcome"] == "original", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("memory-limit:") == true)
        #expect((result["extension"]?["peak_footprint_kb"]?.intValue ?? 0) > 24 * 1024)
    }

    /// A time-sensitive or critical notification needs its entitlement; without it iOS shows an ordinary one.
    @Test func interruptionLevelsNeedTheirEntitlements() throws {
        let push =
            #"{"aps":{"alert":"Door open","interruption-level":"time-sensitive","sound":{"critical":1,"name":"alarm.caf","volume":1.0}}}"#
        let path = try payload("urgent", push)
        func warnings() throws -> [String] {
            let run = try TestSupport.nse(["run", "--device", device, path])
            #expect(run.status == 0, "\(run.stderr)")
            let result = try JSON.parse(run.stdout)
            #expect(result["display"]?["body"]?.stringValue == "Door open")
            return result["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
        let without = try warnings()
        #expect(without.contains { $0.hasPrefix("interruption-level time-sensitive shown as active") }, "\(without)")
        #expect(without.contains { $0.hasPrefix("critical sound played as an ordinary one") }, "\(without)")
        try TestSupport.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>com.apple.developer.usernotifications.time-sensitive</key><true/>
            <key>com.apple.developer.usernotifications.critical-alerts</key><true/>
            </dict></plist>
            """, to: root + "/Urgent.entitlements")
        let set = try TestSupport.nse(["device", "set", device, "--entitlements", root + "/Urgent.entitlements"])
        try #require(set.status == 0, "\(set.stderr)")
        #expect(try warnings().isEmpty)
    }

    /// examples/notification-service: CryptoKit (BoringSSL, partly C++) linked in, the device's key read from the
    /// keychain group the app shares with it (and not from the app's own group), an HPKE envelope opened, the inline
    /// picture attached, the sender recorded.
    @Test func theEndToEndEncryptedExampleOpensItsEnvelope() throws {
        let example = TestSupport.packageRoot + "/examples/notification-service"
        let build = try Self.build([example])
        try #require(build.status == 0, "\(build.stderr)")
        let executable = try #require(build.stdout.split(separator: "\n").last.map(String.init))
        let set = try TestSupport.nse([
            "device", "set", device, "--entitlements", example + "/NotificationService.entitlements",
        ])
        try #require(set.status == 0, "\(set.stderr)")
        let sealed = try TestSupport.nse(
            ["seal", "--device", device, "--hpke"],
            stdin: #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Lunch at 1?"}"#)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(envelope.hasPrefix("hpke1."))
        let push =
            #"{"aps":{"alert":{"title":"New message","body":"(encrypted)"},"mutable-content":1},"enc":"\#(envelope)"}"#
        /// The app at sign-in: its key into the keychain, in `group`, kept `accessible`.
        func keep(in group: String, accessible: String = "after-first-unlock-this-device-only") throws {
            let added = try TestSupport.nse([
                "device", "keychain", "add", device, "--service", "org.example.app.e2ee", "--account", "device-key",
                "--access-group", group, "--accessible", accessible, "--data-file", device + "/keys/private.key",
                "--replace",
            ])
            try #require(added.status == 0, "\(added.stderr)")
            #expect(!added.stdout.contains(try String(contentsOfFile: device + "/keys/private.key", encoding: .utf8)))
        }
        // Kept in the app's own group (its application identifier), the key is not the extension's to read: the
        // server's alert is shown, as on iOS.
        try keep(in: "ABCDE12345.org.example.app")
        let unopened = try runOne(executable, push)
        #expect(unopened["display"]?["title"]?.stringValue == "New message", "\(unopened)")
        #expect(unopened["extension"]?["stderr"]?.stringValue?.contains("OSStatus -25300") == true, "\(unopened)")
        // In the group the entitlements share but kept with Apple's default, "when unlocked", it cannot be read on
        // a locked phone, where pushes usually arrive: errSecInteractionNotAllowed, the server's alert.
        try keep(in: "ABCDE12345.org.example.shared", accessible: "when-unlocked")
        let locked = try TestSupport.nse(["device", "set", device, "--lock-state", "locked"])
        try #require(locked.status == 0, "\(locked.stderr)")
        let whileLocked = try runOne(executable, push)
        #expect(whileLocked["display"]?["title"]?.stringValue == "New message", "\(whileLocked)")
        #expect(whileLocked["extension"]?["stderr"]?.stringValue?.contains("OSStatus -25308") == true, "\(whileLocked)")
        // Kept "after first unlock", as an app whose extension needs it must, it is.
        try keep(in: "ABCDE12345.org.example.shared")
        let result = try runOne(executable, push)
        #expect(result["outcome"] == "rewritten", "\(result)")
        #expect(result["display"]?["title"]?.stringValue == "Alice")
        #expect(result["display"]?["body"]?.stringValue == "Lunch at 1?")
        #expect(result["communication"]?["sender_name"]?.stringValue == "Alice")
        // The log shows neither the text nor the key.
        let log = result["extension"]?["stderr"]?.stringValue ?? ""
        #expect(!log.contains("Lunch"), "\(log)")
    }

    /// `UNUserNotificationCenter`: each push's extension finds the notifications shown before it; a "message
    /// deleted" push removes one and sets the badge, and Notification Center (`nse device show`) follows.
    @Test func anExtensionReadsAndRemovesDeliveredNotifications() throws {
        try grantEntitlements()
        let executable = try Self.built("notification-center")
        func message(_ id: String) -> String {
            #"{"aps":{"alert":{"title":"Alice","body":"Message \#(id)"},"mutable-content":1},"message-id":"\#(id)"}"#
        }
        let first = try runOne(executable, message("m1"))
        #expect(first["display"]?["subtitle"]?.stringValue == "0 earlier", "\(first)")
        let second = try runOne(executable, message("m2"))
        #expect(second["display"]?["subtitle"]?.stringValue == "1 earlier", "\(second)")
        #expect(second["notification"]?["aps"]?["badge"]?.intValue == 2)
        var shown = try TestSupport.nse(["device", "show", device])
        var center = try JSON.parse(shown.stdout)["notification_center"]
        #expect(
            center?["delivered"] == [second["request_id"] ?? .null, first["request_id"] ?? .null], "\(shown.stdout)")
        #expect(center?["badge"]?.intValue == 2)

        let deleted = try runOne(
            executable, #"{"aps":{"alert":"A message was deleted","mutable-content":1},"deleted-id":"m1"}"#)
        #expect(deleted["display"] == .null, "\(deleted)")
        shown = try TestSupport.nse(["device", "show", device])
        center = try JSON.parse(shown.stdout)["notification_center"]
        #expect(center?["delivered"] == [second["request_id"] ?? .null], "\(shown.stdout)")
        #expect(center?["badge"]?.intValue == 1)
    }

    /// `UNUserNotificationCenter.add(_:)`: an extension that posts each fetched message as a notification of its own
    /// and shows nothing for the push; the result lists them, Notification Center (`nse device show`) has them, the
    /// reminder it scheduled and its weekly digest (a repeating calendar trigger, kept with its firings), and a later
    /// push cancels both and clears them.
    @Test func anExtensionPostsAndSchedulesLocalNotifications() throws {
        try grantEntitlements()
        let executable = try Self.built("local-notifications")
        let result = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"New messages"},"mutable-content":1},"messages":[{"id":"m1","from":"Alice","text":"Lunch?"},{"id":"m2","from":"Bob","text":"At one"}]}"#
        )
        #expect(result["outcome"] == "suppressed", "\(result)")
        let locals = result["local_notifications"]?.arrayValue ?? []
        #expect(locals.map { $0["identifier"] } == ["m1", "m2", "reminder", "digest"], "\(result)")
        #expect(locals.first?["shown"] == true && locals.first?["display"]?["body"] == "Lunch?")
        #expect(locals.first?["thread_id"] == "Alice" && locals.first?["trigger"] == .null)
        #expect(locals[2]["shown"] == false && locals[2]["trigger"]?["type"] == "time-interval")
        // The digest as the app made it: its first firing, not the ones the host keeps.
        let digest = try #require(locals.last?["trigger"]?.objectValue, "\(result)")
        #expect(digest["type"] == "calendar" && digest["repeats"] == true && digest["firings"] == nil, "\(digest)")
        let stderr = result["extension"]?["stderr"]?.stringValue ?? ""
        #expect(stderr.contains("empty notification refused: UNError 1401"), "\(stderr)")
        #expect(stderr.contains("pending reminder in 60 min") && !stderr.contains("digest not scheduled"), "\(stderr)")

        var shown = try TestSupport.nse(["device", "show", device])
        var center = try JSON.parse(shown.stdout)["notification_center"]
        #expect(center?["delivered"] == ["m2", "m1"], "\(shown.stdout)")
        // Soonest first: the digest's next Monday 9:00 may come before the reminder's hour.
        let pending = Set(center?["pending"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        #expect(pending == ["reminder", "digest"], "\(shown.stdout)")
        // Kept with its firings, weekly from the first for 400 days (the device's Notification Center log).
        let log = try String(contentsOfFile: device + "/notification-center.jsonl", encoding: .utf8)
        let scheduled = try log.split(separator: "\n").map { try JSON.parse(String($0)) }
            .compactMap { $0["schedule"] }.first { $0["notification"]?["identifier"] == "digest" }
        let firings = scheduled?["firings"]?.arrayValue?.compactMap(\.intValue) ?? []
        #expect((57...58).contains(firings.count) && firings.first == digest["fire_at"]?.intValue, "\(firings)")
        #expect(zip(firings, firings.dropFirst()).allSatisfy { (167...169).contains(($1 - $0) / 3_600_000) })

        let read = try runOne(executable, #"{"aps":{"alert":"Read elsewhere","mutable-content":1},"read":true}"#)
        #expect(read["outcome"] == "suppressed" && read["local_notifications"] == nil, "\(read)")
        shown = try TestSupport.nse(["device", "show", device])
        center = try JSON.parse(shown.stdout)["notification_center"]
        #expect(center?["delivered"] == [] && center?["pending"] == [], "\(shown.stdout)")

        // On a locked phone (Show Previews at iOS's default), the lock screen hides what it posts.
        let lock = try TestSupport.nse(["device", "set", device, "--lock-state", "locked"])
        try #require(lock.status == 0, "\(lock.stderr)")
        let locked = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"New messages"},"mutable-content":1},"messages":[{"id":"m3","from":"Carol","text":"Hi"}]}"#
        )
        let posted = locked["local_notifications"]?.arrayValue ?? []
        #expect(posted.first?["preview_hidden"] == true && posted.last?["preview_hidden"] == nil, "\(locked)")
    }

    /// Swift 5 mode, Xcode's default: handlers given to the completion-handler APIs (settings, delivered, badge, add,
    /// pending, donate, CallKit's report) use `self` and a non-Sendable intent, and Xcode says nothing, those APIs
    /// being imported from Objective-C. The build says nothing either: no warning of the user's, and none of the
    /// toolchain's own (glibc's `mktemp` link warning from Foundation's static library, which every build printed).
    @Test func completionHandlersBuildWithoutWarningsInSwift5Mode() throws {
        let run = try Self.build([Self.fixture("completion-handlers")])
        try #require(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("warning:"), "\(run.stderr)")
        #expect(!run.stderr.contains("mktemp"), "\(run.stderr)")
        let executable = try #require(run.stdout.split(separator: "\n").last.map(String.init))
        let result = try runOne(executable, Self.alert)
        #expect(result["outcome"] == "rewritten", "\(result)")
        #expect(
            result["display"]?["body"]?.stringValue
                == "authorized, 0 delivered, badge set, reminder added, 1 pending, donated c1", "\(result)")
        #expect(result["display"]?["subtitle"] == "org.example.app.NotificationService", "\(result)")
        // A user's own warning still reaches them.
        let folder = root + "/warns"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let source = try String(
            contentsOfFile: Self.fixture("template") + "/NotificationService.swift", encoding: .utf8)
        try TestSupport.write(
            source + "\nfunc unused() { let never = 1 }\n", to: folder + "/NotificationService.swift")
        try TestSupport.write(
            try String(contentsOfFile: Self.fixture("template") + "/Info.plist", encoding: .utf8),
            to: folder + "/Info.plist")
        let warned = try Self.build([folder])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("warning: initialization of immutable value 'never'"), "\(warned.stderr)")
        #expect(!warned.stderr.contains("mktemp"), "\(warned.stderr)")
    }

    /// `setNotificationCategories(_:)` as marketing SDKs use it from an extension: the push names its buttons, the
    /// extension adds a category of them to the app's and gives the content that category. The device keeps the set
    /// (a later push's extension reads it back, `nse device show` lists it); `requestAuthorization` grants.
    @Test func anExtensionAddsTheCategoryOfItsButtons() throws {
        let executable = try Self.built("categories")
        // A device whose app set none has none: no error (reading the file that is not there was one).
        let fresh = try TestSupport.nse(["device", "show", device])
        #expect(try JSON.parse(fresh.stdout)["notification_center"]?["categories"] == [], "\(fresh.stdout)")
        let first = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"Sale","body":"x"},"mutable-content":1},"buttons":[{"id":"open","title":"Open","opens":"app"},{"id":"reply","title":"Reply","reply":"Message"}]}"#
        )
        #expect(first["display"]?["body"] == "buttons-open-reply", "\(first)")
        #expect(first["display"]?["subtitle"] == "Open, Reply (reply)", "\(first)")
        #expect(first["notification"]?["aps"]?["category"] == "buttons-open-reply", "\(first)")
        // The category it registered during the push gives the notification its buttons.
        #expect(
            first["actions"] == [
                ["identifier": "open", "title": "Open", "options": ["foreground"]],
                [
                    "identifier": "reply", "title": "Reply", "options": [],
                    "text_input": ["button_title": "Send", "placeholder": "Message"],
                ],
            ], "\(first)")
        #expect(first["extension"]?["stderr"]?.stringValue?.contains("UNUserNotificationCenter") != true, "\(first)")
        let second = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"Sale","body":"x"},"mutable-content":1},"buttons":[{"id":"yes","title":"Yes"}]}"#
        )
        #expect(second["display"]?["body"] == "buttons-open-reply, buttons-yes", "\(second)")
        let plain = try runOne(executable, Self.alert)
        #expect(plain["display"]?["body"] == "authorized", "\(plain)")
        let shown = try TestSupport.nse(["device", "show", device])
        #expect(
            try JSON.parse(shown.stdout)["notification_center"]?["categories"] == [
                "buttons-open-reply", "buttons-yes",
            ],
            "\(shown.stdout)")
        // A file the app's side cannot read is said so, not taken for no categories.
        try TestSupport.write("[]", to: device + "/notification-categories.json")
        let broken = try TestSupport.nse(["device", "show", device])
        #expect(
            try JSON.parse(broken.stdout)["notification_center"]?["categories"]?["error"]?.stringValue?.contains(
                "no list of categories")
                == true, "\(broken.stdout)")
        // Nor replaced: the extension read no categories for want of reading them, and would lose them all.
        let after = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"Sale","body":"x"},"mutable-content":1},"buttons":[{"id":"no","title":"No"}]}"#)
        #expect(after["extension"]?["stderr"]?.stringValue?.contains("no list of categories") == true, "\(after)")
        #expect(try String(contentsOfFile: device + "/notification-categories.json", encoding: .utf8) == "[]")
    }

    /// Grouped notifications' summary (iOS 12): `summary-arg` and `summary-arg-count` in the alert, read into the
    /// request's content and written back from the content handed over.
    @Test func theSummaryArgumentGoesBothWays() throws {
        let executable = try built(
            source:
                """
                import UserNotifications
                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.body = "\\(request.content.summaryArgument) \\(request.content.summaryArgumentCount)"
                        content.summaryArgument = "Bob"
                        content.summaryArgumentCount = 3
                        contentHandler(content)
                    }
                }
                """,
            in: "summary")
        let result = try runOne(
            executable,
            #"{"aps":{"alert":{"title":"Group","body":"x","summary-arg":"Alice","summary-arg-count":2},"mutable-content":1}}"#
        )
        #expect(result["display"]?["body"] == "Alice 2", "\(result)")
        #expect(result["notification"]?["aps"]?["alert"]?["summary-arg"] == "Bob", "\(result)")
        #expect(result["notification"]?["aps"]?["alert"]?["summary-arg-count"] == 3, "\(result)")
        #expect(result["notification"]?["aps"]?["summary-arg"] == nil, "\(result)")
    }

    /// `UIDevice.current` as extensions read it for a user agent or an analytics id: an iPhone on the device's iOS
    /// release, a vendor identifier that stays the device's, generic name, unknown battery.
    @Test func uiDeviceIsTheDevicesIPhone() throws {
        let executable = try built(
            source:
                """
                import UIKit
                import UserNotifications
                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        let device = UIDevice.current
                        content.title = "\\(device.systemName) \\(device.systemVersion) \\(device.model) \\(device.name)"
                        content.subtitle = device.identifierForVendor?.uuidString ?? "none"
                        content.body = "\\(device.userInterfaceIdiom == .phone) \\(device.batteryLevel) \\(device.orientation.isValidInterfaceOrientation)"
                        contentHandler(content)
                    }
                }
                """,
            in: "uidevice")
        let set = try TestSupport.nse(["device", "set", device, "--ios-version", "17.4"])
        try #require(set.status == 0, "\(set.stderr)")
        let first = try runOne(executable, Self.alert)
        #expect(first["display"]?["title"] == "iOS 17.4 iPhone iPhone", "\(first)")
        #expect(first["display"]?["body"] == "true -1.0 false", "\(first)")
        let vendor = try #require(first["display"]?["subtitle"]?.stringValue)
        #expect(UUID(uuidString: vendor) != nil && vendor.dropFirst(14).first == "4", "\(first)")
        let again = try runOne(executable, Self.alert)
        #expect(again["display"]?["subtitle"]?.stringValue == vendor, "\(again)")
        // Another device (another token) has another.
        let other = root + "/other-device"
        _ = try TestSupport.nse(["device", "init", other])
        let run = try TestSupport.nse([
            "run", "--device", other, "--extension", executable, try payload("other", Self.alert),
        ])
        let elsewhere = try JSON.parse(run.stdout)["display"]?["subtitle"]?.stringValue
        #expect(elsewhere != nil && elsewhere != vendor, "\(run.stdout)")
    }

    /// Info.plist values through `Bundle.main`, Xcode's build settings filled in (`PRODUCT_BUNDLE_IDENTIFIER` from
    /// `--bundle-identifier`), and the strings.
    @Test func theBundleHasItsInfoPlistAndStrings() throws {
        let run = try Self.build([Self.fixture("bundle-strings"), "--bundle-identifier", "org.example.app.Service"])
        try #require(run.status == 0, "\(run.stderr)")
        let executable = try #require(run.stdout.split(separator: "\n").last.map(String.init))
        let result = try runOne(executable, Self.alert)
        #expect(
            result["display"]?["title"]?.stringValue
                == "Example Service (NotificationServiceExtension, org.example.app.Service)", "\(result)")
        #expect(result["display"]?["subtitle"]?.stringValue == "New message")
        #expect(result["display"]?["body"]?.stringValue == "You have received a message")
    }

    /// `UNNotificationRequest.identifier` is the push's `apns-collapse-id` when `nse serve` got one, as on iOS; else
    /// the request id the result names.
    @Test func theRequestsIdentifierIsTheCollapseIDWhenThePushHadOne() throws {
        let executable = try built(
            source:
                """
                import UserNotifications
                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.subtitle = request.identifier
                        contentHandler(content)
                    }
                }
                """,
            in: "identifier")

        let fromRun = try runOne(executable, Self.alert)
        #expect(fromRun["display"]?["subtitle"] == fromRun["request_id"], "\(fromRun)")

        let serve = try CallCommandTests.Background(
            TestSupport.nse, ["serve", "--listen", "127.0.0.1:0", "--device", device, "--extension", executable],
            in: root, name: "serve")
        defer {
            kill(serve.process.processIdentifier, SIGTERM)
            _ = serve.wait(timeout: 5)
        }
        let listening = try serve.listeningURL()
        let alert = try payload("alert", Self.alert)
        for collapse in ["lunch-thread-7", nil] {
            let pushed = try TestSupport.nse(
                ["push", "--url", listening, "--device", device] + (collapse.map { ["--collapse-id", $0] } ?? [])
                    + [alert])
            #expect(pushed.status == 0, "\(pushed.stderr)")
        }
        let token = try #require(
            try JSON.parse(String(contentsOfFile: device + "/device.json", encoding: .utf8))["tokens"]?["remote"]?
                .stringValue)
        // A 200 answers the push before its extension has run: the second result is read once it is recorded
        // (bounded).
        var list: [JSON] = []
        var fetched = ""
        for _ in 0..<100 where list.count < 2 {
            if !list.isEmpty || !fetched.isEmpty { usleep(100_000) }
            fetched = try TestSupport.run(
                "/usr/bin/curl", ["-s", "\(listening)/v1/devices/\(token)/notifications?limit=2"], timeout: 10
            ).stdout
            list = try #require(
                try JSON.parse(fetched, options: JSONParseOptions(requireObject: false)).arrayValue, "\(fetched)")
        }
        try #require(list.count == 2, "\(fetched)")
        // Newest first: the push without a collapse id, then the one with.
        #expect(list[1]["display"]?["subtitle"]?.stringValue == "lunch-thread-7", "\(list[1])")
        #expect(list[0]["display"]?["subtitle"] == list[0]["request_id"], "\(list[0])")
    }

    /// What real extensions do with Swift concurrency and the main thread, built in Swift 6 mode: a `@MainActor`
    /// principal class (as ntfy's) that asserts it is on the main queue, a `@MainActor override func didReceive` (as
    /// IceCubes's) — both compile against Apple's Objective-C class, and did not against nse's Swift one — and an
    /// unannotated one that delivers from a `Timer` it schedules (a fallback timer), with shared code's "on the main
    /// thread, else `DispatchQueue.main.sync`" helper: on iOS didReceive runs on the main thread, whose run loop
    /// fires the timer. The unannotated one also reads the push's numbers with the casts iOS's `JSONSerialization`
    /// objects answer (`as? Double` of an integer, `as? Bool` of `1`, `as? [Double]`), and hands back a `Date` in
    /// `userInfo`, which nse names.
    @Test func mainActorExtensionsAndTheirTasksRunAsOnIOS() throws {
        let executable = try built(
            source:
                """
                import Foundation
                import UserNotifications

                final class Pending: @unchecked Sendable {
                    let content: UNMutableNotificationContent
                    let handler: (UNNotificationContent) -> Void
                    init(_ content: UNMutableNotificationContent, _ handler: @escaping (UNNotificationContent) -> Void) {
                        self.content = content
                        self.handler = handler
                    }
                }

                func onMain<T>(_ work: () -> T) -> T { Thread.isMainThread ? work() : DispatchQueue.main.sync(execute: work) }

                class NotificationService: UNNotificationServiceExtension {
                    var delegate: UNNotificationServiceExtension?

                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        switch request.content.userInfo["style"] as? String {
                        case "main-actor-class": delegate = MainActorService()
                        case "main-actor-method": delegate = MainActorMethodService()
                        default: break
                        }
                        if let delegate {
                            delegate.didReceive(request, withContentHandler: contentHandler)
                            return
                        }
                        let info = request.content.userInfo
                        let sent = info["ts"] as? Double
                        let muted = info["muted"] as? Bool
                        let ids = info["ids"] as? [Double]
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.userInfo["receivedAt"] = Date()
                        content.userInfo[42] = "answer"
                        let pending = Pending(content, contentHandler)
                        let place = onMain { Thread.isMainThread } ? "on the main thread" : "elsewhere"
                        Timer.scheduledTimer(withTimeInterval: 0.05, repeats: false) { _ in
                            pending.content.body = NotificationService.describe(sent: sent, muted: muted, ids: ids) + ", " + place
                            pending.handler(pending.content)
                        }
                    }

                    override func serviceExtensionTimeWillExpire() { delegate?.serviceExtensionTimeWillExpire() }

                    nonisolated static func describe(sent: Double?, muted: Bool?, ids: [Double]?) -> String {
                        let time = sent.map { String(Int($0)) } ?? "no time"
                        return "\\(time), \\(muted == true ? "muted" : "not muted"), \\(ids?.count ?? -1) ids"
                    }
                }

                @MainActor
                final class MainActorService: UNNotificationServiceExtension {
                    var contentHandler: ((UNNotificationContent) -> Void)?
                    var bestAttemptContent: UNMutableNotificationContent?

                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        dispatchPrecondition(condition: .onQueue(.main))
                        MainActor.assumeIsolated { self.contentHandler = contentHandler }
                        bestAttemptContent = request.content.mutableCopy() as? UNMutableNotificationContent
                        Task {
                            try? await Task.sleep(nanoseconds: 1_000_000)
                            bestAttemptContent?.body = "main-actor class"
                            if let bestAttemptContent { self.contentHandler?(bestAttemptContent) }
                        }
                    }

                    override func serviceExtensionTimeWillExpire() {
                        if let contentHandler, let bestAttemptContent { contentHandler(bestAttemptContent) }
                    }
                }

                class MainActorMethodService: UNNotificationServiceExtension {
                    @MainActor override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.body = "main-actor method"
                        contentHandler(content)
                    }
                }
                """,
            in: "main-actor", options: ["--swift-version", "6"])
        let numbers = try payload(
            "numbers",
            #"{"aps":{"alert":{"title":"Alice","body":"Sealed"},"mutable-content":1},"ts":1700000000,"muted":1,"ids":[1,2]}"#
        )
        let classStyle = try payload(
            "class", #"{"aps":{"alert":{"body":"Sealed"},"mutable-content":1},"style":"main-actor-class"}"#)
        let methodStyle = try payload(
            "method", #"{"aps":{"alert":{"body":"Sealed"},"mutable-content":1},"style":"main-actor-method"}"#)
        let results = try run(executable, [numbers, classStyle, methodStyle])
        try #require(results.count == 3)
        #expect(results.allSatisfy { $0["outcome"] == .string("rewritten") }, "\(results)")
        #expect(results[0]["display"]?["body"] == "1700000000, muted, 2 ids, on the main thread", "\(results[0])")
        // A Date in the userInfo handed back has no JSON form: named, in the info and a warning, never its value.
        #expect(results[0]["extension"]?["info"]?["user_info_not_json"]?.arrayValue == ["42", "receivedAt"])
        let warnings = results[0]["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(warnings.contains { $0.hasPrefix("userInfo keys left out") && $0.hasSuffix(": 42, receivedAt") })
        #expect(results[1]["display"]?["body"] == "main-actor class", "\(results[1])")
        #expect(results[2]["display"]?["body"] == "main-actor method", "\(results[2])")
    }

    /// `os`'s C functions as extensions call them: a counter behind `os_unfair_lock` (Mastodon-style), an
    /// `OSAllocatedUnfairLock`, `os_proc_available_memory()` (Element X logs it) answering the device's limit minus
    /// the footprint; an unlock by a thread that does not hold the lock stops the process with Apple's message.
    @Test func osLocksAndAvailableMemoryWorkAsOnIOS() throws {
        let executable = try built(
            source:
                """
                import Foundation
                import UserNotifications
                import os

                final class Counter: @unchecked Sendable {
                    private var lock = os_unfair_lock()
                    private var value = 0
                    func add() {
                        os_unfair_lock_lock(&lock)
                        value += 1
                        os_unfair_lock_unlock(&lock)
                    }
                    var count: Int {
                        os_unfair_lock_lock(&lock)
                        defer { os_unfair_lock_unlock(&lock) }
                        return value
                    }
                }

                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let counter = Counter()
                        let total = OSAllocatedUnfairLock(initialState: 0)
                        DispatchQueue.concurrentPerform(iterations: 4) { _ in
                            for _ in 0..<10_000 {
                                counter.add()
                                total.withLock { $0 += 1 }
                            }
                        }
                        let plain = OSAllocatedUnfairLock()
                        plain.lock()
                        let again = plain.lockIfAvailable()
                        plain.precondition(.owner)
                        plain.unlock()
                        plain.precondition(.notOwner)
                        let megabytes = os_proc_available_memory() >> 20
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.body = "\\(counter.count) \\(total.withLock { $0 }) \\(again) \\(megabytes)"
                        if request.content.userInfo["misuse"] != nil { plain.unlock() }
                        contentHandler(content)
                    }
                }
                """,
            in: "os-lock")
        let result = try runOne(executable, Self.alert)
        let words = result["display"]?["body"]?.stringValue?.split(separator: " ").map(String.init) ?? []
        try #require(words.count == 4, "\(result)")
        #expect(words[0] == "40000" && words[1] == "40000" && words[2] == "false", "\(result)")
        // iOS 18's 24 MB less the extension's footprint (about 1 MB in a debug build).
        let available = try #require(Int(words[3]))
        #expect(available > 12 && available < 24, "\(result)")
        let larger = try runOne(executable, Self.alert, options: ["--memory-limit", "64"])
        let largerWords = larger["display"]?["body"]?.stringValue?.split(separator: " ") ?? []
        #expect(largerWords.last.flatMap { Int($0) }.map { $0 > 50 && $0 < 64 } == true, "\(larger)")
        // Unlocked twice: stopped, the original shown.
        let misuse = try runOne(
            executable, #"{"aps":{"alert":{"body":"Sealed"},"mutable-content":1},"misuse":1}"#)
        #expect(misuse["outcome"] == "original", "\(misuse)")
        #expect(
            misuse["extension"]?["stderr"]?.stringValue?.contains(
                "BUG IN CLIENT OF LIBPLATFORM: Unlock of an os_unfair_lock not owned by current thread") == true,
            "\(misuse)")
    }

    /// The build installs the extension as iOS does, an `.appex` bundle in its app's `PlugIns` (GoogleUtilities
    /// tells an extension by the suffix; code reads the app's Info.plist two folders up), and the host gives it a data
    /// container of its own in the device: home, documents, caches and temporary folder.
    @Test func anExtensionIsAnAppexWithAContainerOfItsOwn() throws {
        let executable = try built(
            source:
                """
                import Foundation
                import UserNotifications

                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        var app = Bundle.main
                        if app.bundleURL.pathExtension == "appex" {
                            let url = app.bundleURL.deletingLastPathComponent().deletingLastPathComponent()
                            if let other = Bundle(url: url) { app = other }
                        }
                        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first!
                        let documents = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first!
                        let cached = FileManager.default.createFile(
                            atPath: caches.appendingPathComponent("avatar.png").path, contents: Data([1]))
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.title = app.bundleIdentifier ?? "no app"
                        content.subtitle = Bundle.main.bundlePath.hasSuffix(".appex") ? "appex" : "not an appex"
                        content.body = [NSHomeDirectory(), documents.path, caches.path, NSTemporaryDirectory(), "\\(cached)"]
                            .joined(separator: "|")
                        contentHandler(content)
                    }
                }
                """,
            in: "appex", options: ["--bundle-identifier", "org.example.chat.Service"])
        #expect(
            executable.hasSuffix("/chat.app/PlugIns/NotificationServiceExtension.appex/NotificationServiceExtension"))
        for launch in ["exec", "fork"] {
            let result = try runOne(executable, Self.alert, options: ["--extension-launch", launch])
            #expect(result["display"]?["title"] == "org.example.chat", "\(result)")
            #expect(result["display"]?["subtitle"] == "appex", "\(result)")
            let home = device + "/Extension"
            let folders = result["display"]?["body"]?.stringValue?.split(separator: "|").map(String.init) ?? []
            #expect(
                folders == [home, home + "/Documents", home + "/Library/Caches", home + "/tmp/", "true"], "\(result)")
        }
        #expect(FileManager.default.fileExists(atPath: device + "/Extension/Library/Caches/avatar.png"))
    }

    /// The C modules real extensions import: `CommonCrypto` as Rocket.Chat's decrypts a message (`CCCrypt`, AES-128
    /// CBC, PKCS#7; the ciphertext made here by the `openssl` tool) and as others hash (`CC_SHA256`, the streaming
    /// form, `CCHmac` with a key longer than a block, PBKDF2, random bytes), with CommonCrypto's statuses for a key
    /// of the wrong size, a short buffer and unaligned input; and `SQLite3` as Mattermost's reads its database.
    @Test func commonCryptoAndSQLite3WorkAsOnIOS() throws {
        let executable = try built(
            source:
                """
                import CommonCrypto
                import Foundation
                import SQLite3
                import UserNotifications

                func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        var parts: [String] = []
                        let key: [UInt8] = Array(0..<16)
                        let iv: [UInt8] = Array((0..<16).reversed())
                        let sealed = Data(base64Encoded: request.content.userInfo["ct"] as? String ?? "") ?? Data()
                        var opened = [UInt8](repeating: 0, count: sealed.count + kCCBlockSizeAES128)
                        var moved = 0
                        let status = sealed.withUnsafeBytes { input in
                            CCCrypt(CCOperation(kCCDecrypt), CCAlgorithm(kCCAlgorithmAES), CCOptions(kCCOptionPKCS7Padding),
                                    key, kCCKeySizeAES128, iv, input.baseAddress, sealed.count, &opened, opened.count, &moved)
                        }
                        parts.append(status == kCCSuccess ? String(decoding: opened[..<moved], as: UTF8.self) : "status \\(status)")
                        var digest = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
                        _ = CC_SHA256(Array("abc".utf8), 3, &digest)
                        parts.append(hex(digest))
                        var context = CC_SHA256_CTX()
                        CC_SHA256_Init(&context)
                        CC_SHA256_Update(&context, Array("a".utf8), 1)
                        CC_SHA256_Update(&context, Array("bc".utf8), 2)
                        CC_SHA256_Final(&digest, &context)
                        parts.append(hex(digest))
                        var mac = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
                        let message = Array("The quick brown fox jumps over the lazy dog".utf8)
                        CCHmac(CCHmacAlgorithm(kCCHmacAlgSHA256), Array("key".utf8), 3, message, message.count, &mac)
                        parts.append(hex(mac))
                        var long = [UInt8](repeating: 0, count: Int(CC_SHA512_DIGEST_LENGTH))
                        var hmac = CCHmacContext()
                        let longKey = [UInt8](repeating: UInt8(ascii: "k"), count: 200)
                        CCHmacInit(&hmac, CCHmacAlgorithm(kCCHmacAlgSHA512), longKey, longKey.count)
                        CCHmacUpdate(&hmac, Array("x".utf8), 1)
                        CCHmacFinal(&hmac, &long)
                        parts.append(String(hex(long).prefix(16)))
                        var derived = [UInt8](repeating: 0, count: 32)
                        let derivation = CCKeyDerivationPBKDF(CCPBKDFAlgorithm(kCCPBKDF2), "password", 8, Array("salt".utf8), 4,
                                                              CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), 1, &derived, 32)
                        parts.append(derivation == kCCSuccess ? hex(derived) : "pbkdf2 \\(derivation)")
                        var out = [UInt8](repeating: 0, count: 8)
                        let badKey = CCCrypt(CCOperation(kCCEncrypt), CCAlgorithm(kCCAlgorithmAES), 0, key, 15, nil,
                                             key, 16, &out, out.count, &moved)
                        let short = CCCrypt(CCOperation(kCCEncrypt), CCAlgorithm(kCCAlgorithmAES), CCOptions(kCCOptionPKCS7Padding),
                                            key, 16, nil, key, 3, &out, out.count, &moved)
                        let shortMoved = moved
                        let unaligned = CCCrypt(CCOperation(kCCDecrypt), CCAlgorithm(kCCAlgorithmAES), 0, key, 16, nil,
                                                key, 5, &out, out.count, &moved)
                        parts.append("\\(badKey) \\(short) \\(shortMoved) \\(unaligned)")
                        var random = [UInt8](repeating: 0, count: 16)
                        parts.append("\\(CCRandomGenerateBytes(&random, 16)) \\(random.contains { $0 != 0 })")
                        var db: OpaquePointer?
                        var rows: Int32 = -1
                        if sqlite3_open(":memory:", &db) == SQLITE_OK {
                            sqlite3_exec(db, "CREATE TABLE m(x); INSERT INTO m VALUES(1),(2);", nil, nil, nil)
                            var statement: OpaquePointer?
                            if sqlite3_prepare_v2(db, "SELECT count(*) FROM m", -1, &statement, nil) == SQLITE_OK,
                                sqlite3_step(statement) == SQLITE_ROW {
                                rows = sqlite3_column_int(statement, 0)
                            }
                            sqlite3_finalize(statement)
                            sqlite3_close(db)
                        }
                        parts.append("rows \\(rows)")
                        let content = request.content.mutableCopy() as! UNMutableNotificationContent
                        content.body = parts.joined(separator: "|")
                        contentHandler(content)
                    }
                }
                """,
            in: "common-crypto")
        let sealed = try TestSupport.run(
            "/bin/sh",
            [
                "-c",
                "printf 'Lunch at 1?' | openssl enc -aes-128-cbc -K 000102030405060708090a0b0c0d0e0f -iv 0f0e0d0c0b0a09080706050403020100 -base64",
            ], timeout: 10)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let ciphertext = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try runOne(
            executable, #"{"aps":{"alert":{"body":"Encrypted"},"mutable-content":1},"ct":"\#(ciphertext)"}"#)
        let parts = result["display"]?["body"]?.stringValue?.split(separator: "|").map(String.init) ?? []
        try #require(parts.count == 9, "\(result)")
        #expect(parts[0] == "Lunch at 1?")
        // FIPS 180-2's "abc", RFC 2104's usual example, RFC 6070's PBKDF2 (with SHA-256), and Python's HMAC-SHA512.
        #expect(parts[1] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(parts[2] == parts[1])
        #expect(parts[3] == "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8")
        #expect(parts[4] == "3bea04514dec7eac")
        #expect(parts[5] == "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
        #expect(parts[6] == "-4310 -4301 16 -4303", "key size, buffer too small (16 needed), alignment")
        #expect(parts[7] == "0 true")
        #expect(parts[8] == "rows 2")
    }

    /// `WidgetCenter` as extensions use it to refresh a widget with what the push brought: the reloads asked for
    /// are in the result (a kind once, `*` for all), a later push's result has none of them, and the installed
    /// widgets are none.
    @Test func widgetReloadsAreRecordedPerPush() throws {
        let executable = try built(
            source:
                """
                import UserNotifications
                import WidgetKit

                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        if request.content.userInfo["reload"] != nil {
                            WidgetCenter.shared.reloadTimelines(ofKind: "Unread")
                            WidgetCenter.shared.reloadTimelines(ofKind: "Unread")
                            WidgetCenter.shared.reloadAllTimelines()
                        }
                        WidgetCenter.shared.getCurrentConfigurations { result in
                            let content = request.content.mutableCopy() as! UNMutableNotificationContent
                            content.body = "\\((try? result.get())?.count ?? -1) widgets"
                            contentHandler(content)
                        }
                    }
                }
                """,
            in: "widgets")
        let reload = try payload("reload", #"{"aps":{"alert":{"body":"x"},"mutable-content":1},"reload":1}"#)
        let plain = try payload("plain", Self.alert)
        let results = try run(executable, [reload, plain], options: ["--extension-process", "warm"])
        try #require(results.count == 2)
        #expect(results[0]["display"]?["body"] == "0 widgets", "\(results[0])")
        #expect(results[0]["extension"]?["info"]?["widget_reloads"]?.arrayValue == ["Unread", "*"], "\(results[0])")
        #expect(results[1]["extension"]?["info"]?["widget_reloads"] == nil, "\(results[1])")
        #expect(results[1]["extension"]?["process"] == "warm", "one process served both: \(results[1])")
    }

    /// The one thing an unannotated override does differently here (docs/sdk.md): it is main-actor isolated, so a
    /// `Task` it starts and then blocks the main thread waiting for waits behind it. The push expires as on iOS for
    /// any blocked extension, the original is shown, and the extension's stderr says what nse can tell.
    @Test func aDidReceiveThatWaitsForItsOwnTaskIsNamedAtExpiry() throws {
        let executable = try built(
            source:
                """
                import Foundation
                import UserNotifications

                class NotificationService: UNNotificationServiceExtension {
                    override func didReceive(_ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
                        let done = DispatchSemaphore(value: 0)
                        Task { done.signal() }
                        done.wait()
                        contentHandler(request.content)
                    }
                }
                """,
            in: "waits-for-its-task")
        let result = try runOne(executable, Self.alert, options: ["--budget", "1", "--grace", "0.5"])
        #expect(result["outcome"] == "original", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("budget-expired") == true, "\(result)")
        #expect(
            result["extension"]?["stderr"]?.stringValue?.contains(
                "nse: didReceive has not returned by the expiry notice: it blocks the main thread") == true,
            "\(result)")
    }
}
