import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Signed envelopes (format nse2) with the built binaries: `nse keys init`, `nse device trust`, `nse seal
/// --sign-with`, and what `nse run` shows for each sender.
@Suite struct SignedSenderTests {
    let root: String
    let bob: String
    let message = #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"wire the money"}"#

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-signed")
        bob = root + "/bob"
        #expect(try TestSupport.nse(["device", "init", bob]).status == 0)
    }

    func identity(_ name: String) throws -> String {
        let path = root + "/\(name).key"
        let made = try TestSupport.nse(["keys", "init", path])
        #expect(made.status == 0, "\(made.stderr)")
        return path
    }

    /// A payload carrying `plaintext` sealed to bob, signed with `signer` when given.
    func payload(_ plaintext: String, signedWith signer: String?) throws -> String {
        let sealed = try TestSupport.nse(
            ["seal", "--device", bob] + (signer.map { ["--sign-with", $0] } ?? []), stdin: plaintext)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return #"{"aps":{"alert":{"loc-key":"IM_MSG"},"mutable-content":1},"enc":"\#(envelope)"}"#
    }

    func run(_ payload: String) throws -> JSON {
        let run = try TestSupport.nse(["run", "--device", bob], stdin: payload)
        #expect(run.status == 0, "\(run.stderr)")
        return try JSON.parse(run.stdout)
    }

    @Test func onlyATrustedKeyShowsTheSenderItClaims() throws {
        let alice = try identity("alice")
        let mallory = try identity("mallory")
        let trusted = try TestSupport.nse([
            "device", "trust", bob, "--contact", "sip:alice@example.org", "--key", alice,
        ])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try JSON.parse(trusted.stdout)["keys"]?.arrayValue?.count == 1)
        // Mallory's key is trusted, but for Mallory.
        let malloryKey = try #require(
            try JSON.parse(String(contentsOfFile: mallory, encoding: .utf8))["public_key"]?.stringValue)
        #expect(
            try TestSupport.nse(["device", "trust", bob, "--contact", "sip:mallory@example.org", "--key", malloryKey])
                .status == 0)

        let verified = try run(try payload(message, signedWith: alice))
        #expect(verified["outcome"] == "rewritten" && verified["sender"] == "verified")
        #expect(verified["display"]?["title"] == "Alice" && verified["display"]?["body"] == "wire the money")

        let forged = try run(try payload(message, signedWith: mallory))
        #expect(forged["outcome"] == "fallback" && forged["sender"] == "unverified")
        #expect(
            forged["reason"]?.stringValue?.hasPrefix("sender-unverified: the signing key is trusted for another")
                == true)
        #expect(forged["display"]?["title"] != "Alice" && forged["display"]?["body"] != "wire the money")

        let stranger = try run(try payload(message, signedWith: try identity("stranger")))
        #expect(stranger["reason"]?.stringValue?.hasPrefix("sender-unverified: the signing key is not trusted") == true)

        // The anonymous form still opens, and says it is anonymous, until the device requires signatures.
        let anonymous = try payload(message, signedWith: nil)
        #expect(try run(anonymous)["sender"] == "anonymous")
        #expect(try TestSupport.nse(["device", "set", bob, "--require-signed-sender", "true"]).status == 0)
        let refused = try run(anonymous)
        #expect(refused["outcome"] == "fallback" && refused["sender"] == "unverified")
        #expect(refused["reason"]?.stringValue?.contains("requires signed senders") == true)
    }

    @Test func aReplayedEnvelopeIsNotShownTwiceAndARotatedKeyTakesOver() throws {
        let alice = try identity("alice")
        #expect(
            try TestSupport.nse(["device", "trust", bob, "--contact", "sip:alice@example.org", "--key", alice]).status
                == 0)
        let once = try payload(message, signedWith: alice)
        #expect(try run(once)["sender"] == "verified")
        let again = try run(once)
        #expect(again["outcome"] == "fallback" && again["reason"]?.stringValue?.hasPrefix("replayed:") == true)

        // A new key replaces the old one: the old key's envelopes are no longer verified.
        let rotated = try identity("alice-2026")
        #expect(
            try TestSupport.nse([
                "device", "trust", bob, "--contact", "sip:alice@example.org", "--key", rotated, "--replace",
            ])
            .status == 0)
        #expect(try run(try payload(message, signedWith: rotated))["sender"] == "verified")
        #expect(try run(try payload(message, signedWith: alice))["sender"] == "unverified")
    }

    @Test func keysAndTrustAreCheckedAndNeverPrinted() throws {
        let alice = try identity("alice")
        let attributes = try FileManager.default.attributesOfItem(atPath: alice)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let secret = try #require(
            try JSON.parse(String(contentsOfFile: alice, encoding: .utf8))["secret_key"]?.stringValue)
        // An identity is never overwritten; one others can read is refused by nse seal.
        let twice = try TestSupport.nse(["keys", "init", alice])
        #expect(twice.status == 78 && twice.stderr.contains("already exists"), "\(twice.stderr)")
        chmod(alice, 0o644)
        let loose = try TestSupport.nse(["seal", "--device", bob, "--sign-with", alice], stdin: message)
        #expect(loose.status == 78 && loose.stderr.contains("refusing a signing key"), "\(loose.stderr)")
        #expect(!loose.stderr.contains(secret) && !loose.stdout.contains(secret))
        for (arguments, problem) in [
            (["device", "trust", bob, "--contact", "alice", "--key", "x"], "--contact must be a sip:"),
            (["device", "trust", bob, "--contact", "sip:alice@example.org", "--key", "not-a-key"], "--key must be"),
        ] {
            let refused = try TestSupport.nse(arguments)
            #expect(refused.status == 64 && refused.stderr.contains(problem), "\(arguments): \(refused.stderr)")
        }
    }
}
