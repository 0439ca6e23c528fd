import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse device keychain`: the app's side of the keychain its extension reads (docs/device.md, "The keychain").
struct KeychainCommandTests {
    let root: String
    let device: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-keychain")
        device = root + "/phone"
        let created = try TestSupport.nse(["device", "init", device, "--team-id", "ABCDE12345"])
        try #require(created.status == 0, "\(created.stderr)")
    }

    @Test("an item added from stdin is listed and deleted; its secret is never printed")
    func addListDelete() throws {
        let secret = "s3cr3t-\(UUID().uuidString)"
        let added = try TestSupport.nse(
            ["device", "keychain", "add", device, "--service", "chat", "--account", "bob", "--data-file", "-"],
            stdin: secret)
        #expect(added.status == 0, "\(added.stderr)")
        let item = try JSON.parse(added.stdout)
        #expect(item["access_group"]?.stringValue == "ABCDE12345.org.example.app")
        #expect(item["accessible"]?.stringValue == "ak")
        #expect(item["data_bytes"]?.intValue == Int64(secret.utf8.count))

        let again = try TestSupport.nse(
            ["device", "keychain", "add", device, "--service", "chat", "--account", "bob", "--data-file", "-"],
            stdin: "other")
        #expect(again.status == 78)
        #expect(again.stderr.contains("--replace"), "\(again.stderr)")
        let replaced = try TestSupport.nse(
            [
                "device", "keychain", "add", device, "--service", "chat", "--account", "bob", "--data-file", "-",
                "--replace",
            ],
            stdin: "other")
        #expect(replaced.status == 0, "\(replaced.stderr)")

        let listed = try TestSupport.nse(["device", "keychain", "list", device])
        #expect(listed.status == 0)
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(try JSON.parse(String(lines[0]))["data_bytes"]?.intValue == 5)
        for output in [added.stdout, added.stderr, again.stderr, listed.stdout] {
            #expect(!output.contains(secret) && !output.contains("other"))
        }

        let deleted = try TestSupport.nse(["device", "keychain", "delete", device, "--account", "bob"])
        #expect(deleted.status == 0)
        #expect(try JSON.parse(deleted.stdout)["deleted"]?.intValue == 1)
        let none = try TestSupport.nse(["device", "keychain", "delete", device, "--account", "bob"])
        #expect(none.status == 66)
    }

    @Test(
        "a group the entitlements do not give, a missing file, options of the wrong class: one line each, their status")
    func refusals() throws {
        let group = try TestSupport.nse(
            [
                "device", "keychain", "add", device, "--service", "chat", "--access-group", "ZZZZZ99999.other",
                "--data-file", "-",
            ], stdin: "x")
        #expect(group.status == 78)
        #expect(group.stderr.contains("ZZZZZ99999.other"), "\(group.stderr)")
        let missing = try TestSupport.nse([
            "device", "keychain", "add", device, "--service", "chat", "--data-file", root + "/none",
        ])
        #expect(missing.status == 66)
        let mixed = try TestSupport.nse(
            [
                "device", "keychain", "add", device, "--service", "chat", "--port", "443", "--data-file", "-",
            ], stdin: "x")
        #expect(mixed.status == 64)
        for run in [group, missing, mixed] {
            #expect(run.stderr.split(separator: "\n").count <= 2, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: root + "/phone/keychain.db") || run.stdout.isEmpty)
        }
    }

    @Test("--accessible takes a class's name or code; --lock-state locks the device, and refuses what it does not know")
    func accessibleAndLockState() throws {
        let added = try TestSupport.nse(
            [
                "device", "keychain", "add", device, "--service", "chat", "--account", "bob", "--data-file", "-",
                "--accessible", "after-first-unlock",
            ], stdin: "x")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try JSON.parse(added.stdout)["accessible"]?.stringValue == "ck")
        let odd = try TestSupport.nse(
            ["device", "keychain", "add", device, "--service", "chat", "--data-file", "-", "--accessible", "never"],
            stdin: "x")
        #expect(odd.status == 64 && odd.stderr.contains("--accessible never"), "\(odd.stderr)")

        let locked = try TestSupport.nse(["device", "set", device, "--lock-state", "before-first-unlock"])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(try JSON.parse(locked.stdout)["lock_state"]?.stringValue == "before-first-unlock")
        let shown = try TestSupport.nse(["device", "show", device])
        #expect(try JSON.parse(shown.stdout)["lock_state"]?.stringValue == "before-first-unlock")
        let bogus = try TestSupport.nse(["device", "set", device, "--lock-state", "asleep"])
        #expect(bogus.status == 64, "\(bogus.stderr)")
        #expect(bogus.stderr.contains("--lock-state asleep"), "\(bogus.stderr)")
        let after = try TestSupport.nse(["device", "show", device])
        #expect(try JSON.parse(after.stdout)["lock_state"]?.stringValue == "before-first-unlock")
    }
}
