import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse serve --record DIR`, as a user runs it: pushes that ran become replay case files, and `nse replay` of a
/// recorded case gives the recorded verdict again, on a fresh device that has only the key by reference
/// (docs/replay.md, "From a production push to a CI case").
@Suite(.serialized) struct ServeRecordingTests {
    let root: String
    let device: String
    let cases: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-record")
        device = root + "/bob"
        cases = root + "/cases"
        let created = try TestSupport.nse(["device", "init", device])
        try #require(created.status == 0, "\(created.stderr)")
    }

    /// `nse serve --record` on a free loopback port; its URL.
    func startServe(_ extra: [String] = []) throws -> (CallCommandTests.Background, String) {
        let serve = try CallCommandTests.Background(
            TestSupport.nse,
            ["serve", "--listen", "127.0.0.1:0", "--device", device, "--record", cases] + extra, in: root,
            name: "serve")
        return (serve, try serve.listeningURL())
    }

    func stop(_ serve: CallCommandTests.Background) {
        kill(serve.process.processIdentifier, SIGTERM)
        #expect(serve.wait(timeout: 5) == 0, "nse serve did not exit 0 within 5 s of SIGTERM: \(serve.errors)")
    }

    /// A push whose `enc` is `plaintext` sealed with `nse seal` (to `to`, the device unless said).
    func sealedPush(_ plaintext: String, to: String? = nil) throws -> String {
        try MediaAttachmentTests.sealedPushFile(plaintext, to: to ?? device, in: root)
    }

    func push(_ url: String, _ payload: String, _ options: [String] = []) throws {
        let pushed = try TestSupport.nse(["push", "--url", url, "--device", device] + options + [payload])
        try #require(pushed.status == 0, "\(pushed.stderr)")
    }

    /// The case files in the folder once there are `count` of them (bounded wait), oldest name first.
    func recorded(_ count: Int) throws -> [String] {
        let until = Date().addingTimeInterval(15)
        var files: [String] = []
        while Date() < until {
            files = ((try? FileManager.default.contentsOfDirectory(atPath: cases)) ?? [])
                .filter { $0.hasSuffix(".json") }.sorted()
            if files.count >= count { break }
            usleep(50_000)
        }
        return files.map { cases + "/" + $0 }
    }

    static let message =
        #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Lunch at one?"}"#

    @Test func aSealedPushIsRecordedAndReplaysToTheSameVerdict() throws {
        let (serve, url) = try startServe()
        try push(url, try sealedPush(Self.message), ["--collapse-id", "thread-7"])
        let files = try recorded(1)
        stop(serve)
        try #require(files.count == 1, "\(serve.errors)")
        let text = try String(contentsOfFile: files[0], encoding: .utf8)
        let recordedCase = try JSON.parse(text)
        #expect(recordedCase["expect"]?["outcome"] == "rewritten", "\(text)")
        #expect(recordedCase["expect"]?["display"]?["body"] == "Lunch at one?")
        #expect(recordedCase["headers"]?["apns-collapse-id"] == "thread-7")
        #expect(recordedCase["device"]?["key_file"]?.stringValue == device + "/keys/private.key")
        // The key by reference only; sealed content stays sealed: the text is in the case only as the lock screen
        // showed it, never the private key.
        let key = try String(contentsOfFile: device + "/keys/private.key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!text.contains(key))
        #expect(recordedCase["payload"]?["enc"]?.stringValue?.hasPrefix("nse1.") == true)
        #expect(try FileManager.default.attributesOfItem(atPath: files[0])[.posixPermissions] as? Int == 0o600)

        let replayed = try TestSupport.nse(["replay", files[0]])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")

        // A case that no longer matches says which field changed.
        var edited = recordedCase.objectValue!
        edited["expect"] = ["outcome": "rewritten", "display": ["title": "Alice", "body": "Dinner?"]]
        let changed = root + "/changed.json"
        try TestSupport.write(JSON.object(edited).serialized(), to: changed)
        let failed = try TestSupport.nse(["replay", changed])
        #expect(failed.status == 1, "\(failed.stdout)\(failed.stderr)")
        #expect((failed.stdout + failed.stderr).contains("display"), "\(failed.stdout)\(failed.stderr)")
    }

    @Test func aFallbackIsRecordedAsAFallback() throws {
        let other = root + "/eve"
        try #require(try TestSupport.nse(["device", "init", other]).status == 0)
        let (serve, url) = try startServe()
        try push(url, try sealedPush(Self.message, to: other))
        let files = try recorded(1)
        stop(serve)
        try #require(files.count == 1)
        let recordedCase = try JSON.parse(try String(contentsOfFile: files[0], encoding: .utf8))
        #expect(recordedCase["expect"]?["outcome"] == "fallback", "\(recordedCase)")
        #expect(recordedCase["expect"]?["reason"]?.stringValue?.isEmpty == false)
        let replayed = try TestSupport.nse(["replay", files[0]])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
    }

    @Test func aPushHeldForAnOfflineDeviceIsRecordedWhenItRuns() throws {
        let (serve, url) = try startServe()
        let token = try #require(
            try JSON.parse(String(contentsOfFile: device + "/device.json", encoding: .utf8))["tokens"]?["remote"]?
                .stringValue)
        func online(_ value: Bool) throws {
            let answer = try TestSupport.run(
                "/usr/bin/curl",
                [
                    "-s", "-X", "PUT", "-H", "content-type: application/json", "-d", #"{"online": \#(value)}"#,
                    "\(url)/v1/control/devices/\(token)/online",
                ], timeout: 10)
            #expect(answer.stdout.contains(#""online":\#(value)"#), "\(answer.stdout)")
        }
        try online(false)
        try push(url, try sealedPush(Self.message))
        usleep(300_000)
        #expect(try recorded(0).isEmpty, "a held push has not run: nothing to record yet")
        try online(true)
        let files = try recorded(1)
        stop(serve)
        try #require(files.count == 1)
        let recordedCase = try JSON.parse(try String(contentsOfFile: files[0], encoding: .utf8))
        #expect(recordedCase["recorded"]?["held_offline"] == true, "\(recordedCase)")
        #expect(recordedCase["expect"]?["outcome"] == "rewritten")
        let replayed = try TestSupport.nse(["replay", files[0]])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
    }

    @Test func aLockedPhonesCaseKeepsItsLockAndKeychainGroupsButNeverItsItems() throws {
        try TestSupport.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>keychain-access-groups</key><array><string>$(AppIdentifierPrefix)org.example.shared</string></array>
            </dict></plist>
            """, to: root + "/App.entitlements")
        let set = try TestSupport.nse([
            "device", "set", device, "--entitlements", root + "/App.entitlements", "--lock-state", "locked",
        ])
        try #require(set.status == 0, "\(set.stderr)")
        let secret = "keychain-secret-\(UUID().uuidString)"
        let kept = try TestSupport.nse(
            ["device", "keychain", "add", device, "--service", "s", "--account", "a", "--data-file", "-"], stdin: secret
        )
        try #require(kept.status == 0, "\(kept.stderr)")
        let team = try #require(try JSON.parse(set.stdout)["team_id"]?.stringValue)

        let (serve, url) = try startServe()
        try push(url, try sealedPush(Self.message))
        let files = try recorded(1)
        stop(serve)
        try #require(files.count == 1, "\(serve.errors)")
        let text = try String(contentsOfFile: files[0], encoding: .utf8)
        let recordedCase = try JSON.parse(text)
        #expect(recordedCase["device"]?["lock_state"] == "locked", "\(text)")
        #expect(
            recordedCase["device"]?["entitlements"]?["keychain_access_groups"]
                == [.string(team + ".org.example.shared")])
        #expect(!text.contains(secret))
        let replayed = try TestSupport.nse(["replay", files[0]])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
    }

    @Test func aCallEscalationIsRecordedWithItsReport() throws {
        let caller = root + "/carol"
        try #require(try TestSupport.nse(["device", "init", caller, "--filtering"]).status == 0)
        let serve = try CallCommandTests.Background(
            TestSupport.nse,
            ["serve", "--listen", "127.0.0.1:0", "--device", caller, "--record", cases], in: root, name: "serve")
        let listening = try serve.listeningURL()
        let offer =
            #"{"type":"call","call_uuid":"6F1C6D3A-3F0B-4C59-9E55-0B7D4E0E8A11","from":"sip:bob@example.org","#
            + #""display_name":"Bob","video":true}"#
        let sealed = try TestSupport.nse(["seal", "--device", caller], stdin: offer)
        try #require(sealed.status == 0)
        let path = root + "/call.json"
        try TestSupport.write(
            #"{"aps":{"alert":{"loc-key":"IC_MSG","loc-args":["Bob"]},"mutable-content":1},"enc":"\#(sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))"}"#,
            to: path)
        let pushed = try TestSupport.nse(["push", "--url", listening, "--device", caller, path])
        try #require(pushed.status == 0, "\(pushed.stderr)")
        let files = try recorded(1)
        stop(serve)
        try #require(files.count == 1)
        let text = try String(contentsOfFile: files[0], encoding: .utf8)
        let recordedCase = try JSON.parse(text)
        #expect(recordedCase["expect"]?["outcome"] == "suppressed", "\(text)")
        #expect(recordedCase["expect"]?["reason"] == "voip-escalated")
        #expect(recordedCase["expect"]?["call_report"] == ["has_video": true, "localized_caller_name": "Bob"])
        #expect(recordedCase["device"]?["entitlements"]?["filtering"] == true)
        let replayed = try TestSupport.nse(["replay", files[0]])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
    }

    @Test func recordingIsSwitchedOffAndOnAtRunTime() throws {
        let (serve, url) = try startServe()
        defer { stop(serve) }
        func control(_ method: String, _ body: String? = nil) throws -> JSON {
            var arguments = ["-s", "-X", method, "\(url)/v1/control/recording"]
            if let body { arguments += ["-H", "content-type: application/json", "-d", body] }
            return try JSON.parse(try TestSupport.run("/usr/bin/curl", arguments, timeout: 10).stdout)
        }
        #expect(try control("GET")["enabled"] == true)
        #expect(try control("PUT", #"{"enabled": false}"#)["enabled"] == false)
        #expect(try control("PUT", #"{"enabled": "no"}"#)["reason"] == "BadControl")
        try push(url, try sealedPush(Self.message))
        // The push ran and was not recorded.
        let token = try #require(
            try JSON.parse(String(contentsOfFile: device + "/device.json", encoding: .utf8))["tokens"]?["remote"]?
                .stringValue)
        let until = Date().addingTimeInterval(15)
        var results: [JSON] = []
        while results.isEmpty, Date() < until {
            let fetched = try TestSupport.run(
                "/usr/bin/curl", ["-s", "\(url)/v1/devices/\(token)/notifications"], timeout: 10)
            results =
                (try? JSON.parse(fetched.stdout, options: JSONParseOptions(requireObject: false)))?.arrayValue ?? []
            if results.isEmpty { usleep(50_000) }
        }
        #expect(results.count == 1)
        #expect(try recorded(0).isEmpty)
        #expect(try control("PUT", #"{"enabled": true}"#)["enabled"] == true)
        try push(url, try sealedPush(Self.message))
        #expect(try recorded(1).count == 1)
        #expect(try control("GET")["written"] == 1)
    }

    @Test func thePageOffersTheCaseOfAShownNotification() throws {
        let (serve, url) = try startServe()
        defer { stop(serve) }
        try push(url, try sealedPush(Self.message))
        let files = try recorded(1)
        try #require(files.count == 1)
        let name = ((files[0] as NSString).lastPathComponent as NSString).deletingPathExtension
        let token = try #require(
            try JSON.parse(String(contentsOfFile: device + "/device.json", encoding: .utf8))["tokens"]?["remote"]?
                .stringValue)
        let results = try TestSupport.run(
            "/usr/bin/curl", ["-s", "\(url)/v1/devices/\(token)/notifications"], timeout: 10)
        let result = try #require(
            try JSON.parse(results.stdout, options: JSONParseOptions(requireObject: false)).arrayValue?.first)
        #expect(result["case"]?.stringValue == name, "\(result)")
        // The recorded exchange is the case's, not the result's.
        #expect(result["extension"]?["info"]?["sip_exchange"] == nil)
        let page = try TestSupport.run("/usr/bin/curl", ["-s", url + "/"], timeout: 10).stdout
        #expect(page.contains(#"<a class="save-case" href="/v1/cases/\#(name)" download="\#(name).json">"#))
        let saved = try TestSupport.run(
            "/usr/bin/curl", ["-s", "-D", root + "/headers", "\(url)/v1/cases/\(name)"], timeout: 10)
        #expect(saved.stdout == (try String(contentsOfFile: files[0], encoding: .utf8)))
        let headers = try String(contentsOfFile: root + "/headers", encoding: .utf8).lowercased()
        #expect(headers.contains("content-disposition: attachment; filename=\"\(name).json\""), "\(headers)")
        for bad in ["..%2Fbob%2Fdevice", "20261127000000-ffffffff", "x"] {
            let status = try TestSupport.run(
                "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(url)/v1/cases/\(bad)"], timeout: 10)
            #expect(status.stdout == "404", "\(bad): \(status.stdout)")
        }
    }

    @Test func withoutRecordTheSwitchIsNotThereAndPlaintextNeedsRecord() throws {
        let refused = try TestSupport.nse([
            "serve", "--listen", "127.0.0.1:0", "--device", device, "--record-plaintext",
        ])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--record-plaintext needs --record"))
    }
}
