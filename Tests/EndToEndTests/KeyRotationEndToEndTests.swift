import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse device rotate-key` (issue #36 §2) with the built binaries: a message sealed to the old key opens after the
/// rotation and the result names the key, until the grace period ends; a message sealed to the new key opens with
/// it; the SIP path (`nse send` + `nse sip-server`, fetched by `nse run`) the same; bad input is one line and a
/// documented status.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct KeyRotationEndToEndTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-rotate-key") }

    func nse(_ arguments: [String], stdin: String? = nil) throws -> TestSupport.Output {
        try TestSupport.nse(arguments, stdin: stdin)
    }

    func seal(_ text: String, to device: String) throws -> String {
        let plaintext = #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"\#(text)"}"#
        let sealed = try nse(["seal", "--device", device], stdin: plaintext)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        return sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func run(_ device: String, payload: String) throws -> JSON {
        let output = try nse(["run", "--device", device, "--budget", "10"], stdin: payload)
        #expect(output.status == 0, "\(output.stderr)")
        return try JSON.parse(output.stdout)
    }

    func open(_ envelope: String, on device: String) throws -> JSON {
        try run(
            device,
            payload:
                #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"enc":"\#(envelope)"}"#
        )
    }

    func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    @Test func theOldKeyOpensDuringItsGraceAndNotAfter() throws {
        let bob = root + "/bob"
        #expect(try nse(["device", "init", bob]).status == 0)
        let oldID = try #require(try JSON.parse(try nse(["device", "show", bob]).stdout)["key_id"]?.stringValue)
        // Before any rotation, a device's key file is its current key.
        let first = try seal("before", to: bob)
        let before = try open(first, on: bob)
        #expect(before["extension"]?["info"]?["key"] == "current")
        #expect(before["extension"]?["info"]?["key_id"] == .string(oldID))
        let sealedToOld = try seal("sealed to the old key", to: bob)
        let rotated = try nse(["device", "rotate-key", bob, "--grace", "4"])
        let rotatedAt = Date()
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let rotation = try JSON.parse(rotated.stdout)
        let newID = try #require(rotation["key_id"]?.stringValue)
        #expect(newID != oldID && rotation["retired"]?["key_id"] == .string(oldID))
        #expect(rotation["retained"]?.arrayValue?.first?["key_id"] == .string(oldID) && rotation["resumed"] == false)
        #expect(!rotated.stdout.contains(try String(contentsOfFile: bob + "/keys/private.key", encoding: .utf8)))
        // Senders now find the new key where they found the old one.
        let shown = try JSON.parse(try nse(["device", "show", bob]).stdout)
        #expect(shown["key_id"] == .string(newID) && shown["public_key"] == rotation["public_key"])
        #expect(shown["keys"]?["current"] == .string(newID))
        #expect(shown["keys"]?["retired"]?.arrayValue?.first?["state"] == "retained")
        let retiredFile = bob + "/keys/retired/\(oldID).json"
        #expect(try mode(bob + "/keys/private.key") == 0o600)
        #expect(try mode(retiredFile) == 0o600)
        #expect(try mode(bob + "/keys/retired") == 0o700)
        // Pushed after the rotation: opens with the retired key, and the result names it.
        let late = try open(sealedToOld, on: bob)
        #expect(late["outcome"] == "rewritten", "\(late["reason"] ?? .null)")
        #expect(late["display"]?["body"] == "sealed to the old key")
        #expect(late["extension"]?["info"]?["key_id"] == .string(oldID))
        #expect(late["extension"]?["info"]?["key"] == "retired")
        // A message sealed after the rotation is sealed to the new key.
        let fresh = try open(try seal("sealed to the new key", to: bob), on: bob)
        #expect(fresh["outcome"] == "rewritten" && fresh["display"]?["body"] == "sealed to the new key")
        #expect(fresh["extension"]?["info"]?["key_id"] == .string(newID))
        #expect(fresh["extension"]?["info"]?["key"] == "current")
        // Past the grace period: the loc-key fallback, the reason says why, and the retired secret is gone.
        let wait = 4.2 - Date().timeIntervalSince(rotatedAt)
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        let expired = try open(sealedToOld, on: bob)
        #expect(expired["outcome"] == "fallback")
        #expect(expired["display"]?["body"] == "You have received a message")
        let reason = expired["reason"]?.stringValue ?? ""
        #expect(
            reason.hasPrefix("envelope-wrong-key: the envelope is sealed to key \(oldID), which this device retired"))
        #expect(reason.contains("grace period ended"), "\(reason)")
        #expect(expired["extension"]?["info"]?["key_id"] == nil)
        let record = try String(contentsOfFile: retiredFile, encoding: .utf8)
        #expect(!record.contains("secret_key") && record.contains("dropped_at"))
        #expect(
            try JSON.parse(try nse(["device", "show", bob]).stdout)["keys"]?["retired"]?.arrayValue?.first?["state"]
                == "dropped")
        // The current key was never touched.
        #expect(try open(try seal("still fine", to: bob), on: bob)["outcome"] == "rewritten")
    }

    @Test func aHeldMessageSealedBeforeTheRotationIsFetchedAndOpened() throws {
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.2"])
        let proxy = try #require(server.uris["tcp"])
        let carol = root + "/carol"
        #expect(
            try nse(["device", "init", carol, "--sip-account", "sip:carol@example.org", "--sip-proxy", proxy]).status
                == 0)
        let oldID = try #require(try JSON.parse(try nse(["device", "show", carol]).stdout)["key_id"]?.stringValue)
        #expect(try nse(["device", "register", carol]).status == 0)
        let sent = try nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:carol@example.org", "--text",
            "held across the rotation", "--seal-to", carol, "--display-name", "Alice", "--timeout", "10",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        let callID = try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)
        #expect(server.waitFor("held", ["call_id": callID]) != nil)
        let rotated = try nse(["device", "rotate-key", carol])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        // The default grace: a week, the time the server holds a message.
        let retained = try JSON.parse(rotated.stdout)["retired"]
        let retiredAt = try #require(retained?["retired_at"]?.stringValue)
        let dropAt = try #require(retained?["drop_at"]?.stringValue)
        #expect(retiredAt != dropAt)
        let result = try run(
            carol,
            payload:
                #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"sound":"msg.caf","mutable-content":1},"call-id":"\#(callID)"}"#
        )
        #expect(result["outcome"] == "rewritten", "\(result["reason"] ?? .null)")
        #expect(result["display"]?["body"] == "held across the rotation")
        #expect(result["extension"]?["info"]?["encrypted"] == true)
        #expect(result["extension"]?["info"]?["key_id"] == .string(oldID))
        #expect(result["extension"]?["info"]?["key"] == "retired")
    }

    @Test func badInputIsOneLineAndADocumentedStatus() throws {
        let missing = try nse(["device", "rotate-key", root + "/nobody"])
        #expect(missing.status == 78)
        #expect(
            missing.stderr.hasPrefix("nse: ") && missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("is not a device"))
        let dave = root + "/dave"
        #expect(try nse(["device", "init", dave]).status == 0)
        let keyBefore = try String(contentsOfFile: dave + "/keys/private.key", encoding: .utf8)
        for (grace, problem) in [("-5", "--grace must not be negative"), ("abc", "abc"), ("40000000", "at most")] {
            let refused = try nse(["device", "rotate-key", dave, "--grace", grace])
            #expect(refused.status == 64, "\(grace): \(refused.stderr)")
            #expect(
                refused.stderr.split(separator: "\n").count == 1 && refused.stderr.contains(problem),
                "\(refused.stderr)")
        }
        // Nothing changed.
        #expect(try String(contentsOfFile: dave + "/keys/private.key", encoding: .utf8) == keyBefore)
        #expect(!FileManager.default.fileExists(atPath: dave + "/keys/retired"))
        // A private key others can read is refused before anything is written.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: dave + "/keys/private.key")
        let unsafe = try nse(["device", "rotate-key", dave])
        #expect(unsafe.status == 78 && unsafe.stderr.contains("mode 644"), "\(unsafe.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dave + "/keys/retired"))
    }
}
