import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// A person with several phones (issue #36 §2) with the built binaries: `nse send --seal-to` repeated seals one
/// `nse3` envelope for Bob's three phones, `nse sip-server` holds it for the three and hands it to each once, each
/// phone's extension opens it with its own key; a phone added later never gets it; a restart loses nothing and
/// duplicates nothing.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SeveralDevicesTests {
    let root: String
    init() throws { root = try TestSupport.temporaryDirectory("nse-several-devices") }

    func nse(_ arguments: [String], stdin: String? = nil) throws -> TestSupport.Output {
        try TestSupport.nse(arguments, stdin: stdin)
    }

    /// Alice's identity, trusted by each of `phones`.
    func alice(trustedBy phones: [String]) throws -> String {
        let path = root + "/alice.key"
        if !FileManager.default.fileExists(atPath: path) {
            #expect(try nse(["keys", "init", path]).status == 0)
        }
        for phone in phones {
            let trusted = try nse(["device", "trust", phone, "--contact", "sip:alice@example.org", "--key", path])
            #expect(trusted.status == 0, "\(trusted.stderr)")
        }
        return path
    }

    /// One of Bob's phones: its own key and `+sip.instance`, Bob's account.
    func phone(_ name: String, proxy: String) throws -> String {
        let path = root + "/" + name
        let created = try nse([
            "device", "init", path, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy,
        ])
        #expect(created.status == 0, "\(created.stderr)")
        return path
    }

    func keyID(_ phone: String) throws -> String {
        try #require(try JSON.parse(try nse(["device", "show", phone]).stdout)["key_id"]?.stringValue)
    }

    /// The push for `callID` reaching `phone`: its extension fetches the message and shows what it can.
    func wake(_ phone: String, _ callID: String) throws -> JSON {
        let payload =
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"\#(callID)"}"#
        let output = try nse(["run", "--device", phone, "--budget", "3"], stdin: payload)
        #expect(output.status == 0, "\(output.stderr)")
        return try JSON.parse(output.stdout)
    }

    func send(_ text: String, proxy: String, to phones: [String], signedWith identity: String) throws -> String {
        let sent = try nse(
            [
                "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org",
                "--text", text, "--display-name", "Alice", "--sign-with", identity, "--timeout", "10",
            ] + phones.flatMap { ["--seal-to", $0] })
        #expect(sent.status == 0, "\(sent.stderr)")
        return try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)
    }

    @Test func threePhonesEachShowTheMessageOnceWithTheirOwnKey() throws {
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.2"])
        let proxy = try #require(server.uris["tcp"])
        let phones = try ["phone1", "phone2", "phone3"].map { try phone($0, proxy: proxy) }
        let identity = try alice(trustedBy: phones)
        for phone in phones { #expect(try nse(["device", "register", phone]).status == 0) }
        let callID = try send("dinner at 8", proxy: proxy, to: phones, signedWith: identity)
        let held = try #require(server.waitFor("held", ["call_id": callID]))
        #expect(held["devices"]?.arrayValue?.count == 3)

        // A fourth phone, added after the message: registered, it is never sent it.
        let late = try phone("phone4", proxy: proxy)
        _ = try alice(trustedBy: [late])
        #expect(try nse(["device", "register", late]).status == 0)

        for phone in phones {
            let shown = try wake(phone, callID)
            #expect(shown["outcome"] == "rewritten", "\(shown["reason"] ?? .null)")
            #expect(shown["display"]?["body"] == "dinner at 8")
            #expect(shown["sender"] == "verified")
            #expect(shown["extension"]?["info"]?["key_id"] == .string(try keyID(phone)))
            #expect(server.waitFor("delivered", ["call_id": callID]) != nil)
        }
        // Once each: the same push again is not shown again.
        let again = try wake(phones[0], callID)
        #expect(again["display"]?["body"] != "dinner at 8")

        let lateResult = try wake(late, callID)
        #expect(lateResult["outcome"] == "fallback")
        #expect(lateResult["reason"]?.stringValue?.hasPrefix("not-found") == true, "\(lateResult["reason"] ?? .null)")
    }

    @Test func aPhoneAddedLaterCannotOpenTheEnvelopeAndSingleRecipientsKeepNse2() throws {
        let phones = try ["a", "b"].map { try phone($0, proxy: "sip:127.0.0.1:9;transport=tcp") }
        let late = try phone("late", proxy: "sip:127.0.0.1:9;transport=tcp")
        let identity = try alice(trustedBy: phones + [late])
        let plaintext =
            #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"for a and b"}"#
        let sealed = try nse(
            ["seal", "--device", phones[0], "--device", phones[1], "--sign-with", identity], stdin: plaintext)
        #expect(sealed.status == 0, "\(sealed.stderr)")
        let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(envelope.hasPrefix("nse3.xchacha20poly1305-sealedbox-ed25519."))
        func open(_ phone: String) throws -> JSON {
            let payload =
                #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"enc":"\#(envelope)"}"#
            let output = try nse(["run", "--device", phone, "--budget", "5"], stdin: payload)
            #expect(output.status == 0, "\(output.stderr)")
            return try JSON.parse(output.stdout)
        }
        for phone in phones {
            let shown = try open(phone)
            #expect(shown["display"]?["body"] == "for a and b" && shown["sender"] == "verified")
            #expect(shown["extension"]?["info"]?["key_id"] == .string(try keyID(phone)))
        }
        let refused = try open(late)
        #expect(refused["outcome"] == "fallback")
        #expect(
            refused["reason"]?.stringValue?.hasPrefix(
                "envelope-not-recipient: the envelope is sealed to 2 device key(s)")
                == true, "\(refused["reason"] ?? .null)")
        #expect(refused["display"]?["body"] != "for a and b")

        // One device: nse2 as before; several without a signature: refused, one line, usage status.
        let single = try nse(["seal", "--device", phones[0], "--sign-with", identity], stdin: plaintext)
        #expect(single.stdout.hasPrefix("nse2."))
        let unsigned = try nse(["seal", "--device", phones[0], "--device", phones[1]], stdin: plaintext)
        #expect(unsigned.status == 64 && unsigned.stderr.contains("needs --sign-with"), "\(unsigned.stderr)")
        let twice = try nse(
            ["seal", "--device", phones[0], "--device", phones[0], "--sign-with", identity], stdin: plaintext)
        #expect(twice.status == 64 && twice.stderr.contains("given twice"), "\(twice.stderr)")
        #expect(twice.stderr.split(separator: "\n").count == 1)
    }

    @Test func aRestartBetweenDeliveriesLosesNothingAndDuplicatesNothing() throws {
        let db = root + "/db"
        var server = try SIPServerProcess([
            "--listen", "tcp:127.0.0.1:0", "--no-push", "--accept-timeout", "0.2", "--db", db,
        ])
        let port = try #require(server.ports["tcp"])
        let proxy = try #require(server.uris["tcp"])
        let phones = try ["r1", "r2", "r3"].map { try phone($0, proxy: proxy) }
        let identity = try alice(trustedBy: phones)
        for phone in phones { #expect(try nse(["device", "register", phone]).status == 0) }
        let callID = try send("survives restarts", proxy: proxy, to: phones, signedWith: identity)
        #expect(server.waitFor("held", ["call_id": callID]) != nil)
        #expect(try wake(phones[0], callID)["display"]?["body"] == "survives restarts")
        #expect(server.waitFor("delivered", ["call_id": callID])?["remaining"]?.intValue == 2)
        server.stop()

        server = try SIPServerProcess([
            "--listen", "tcp:127.0.0.1:\(port)", "--no-push", "--accept-timeout", "0.2", "--db", db,
        ])
        for (phone, remaining) in zip(phones[1...], [1, 0]) {
            let shown = try wake(phone, callID)
            #expect(shown["display"]?["body"] == "survives restarts", "\(shown["reason"] ?? .null)")
            #expect(shown["extension"]?["info"]?["key_id"] == .string(try keyID(phone)))
            #expect(server.waitFor("delivered", ["call_id": callID])?["remaining"]?.intValue == Int64(remaining))
        }
        // The first phone had it before the restart: the server does not send it again.
        #expect(try nse(["device", "register", phones[0]]).status == 0)
        #expect(server.waitFor("forwarded", ["call_id": callID], timeout: 1.5) == nil)
        server.stop()
    }
}
