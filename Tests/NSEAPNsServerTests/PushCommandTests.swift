import Foundation
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// `nse push` against `nse serve` over h2 (TLS) with token authentication: both binaries, as a user runs them.
@Suite(.serialized) struct PushCommandTests {
    let root: String
    let device: Device
    let key: TestAPNsKey
    let certificate: String
    let certificateKey: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-push")
        let created = try TestSupport.nse([
            "device", "init", root + "/bob", "--bundle-id", "org.example.app", "--filtering",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        device = try Device.open(at: root + "/bob")
        key = try TestAPNsKey(in: root)
        let files = try TestSupport.selfSignedCertificate(in: root)
        (certificate, certificateKey) = (files.certificate, files.key)
    }

    func serve() throws -> ServeProcess {
        try ServeProcess([
            "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", certificateKey, "--device",
            root + "/bob",
            "--auth-key-file", key.path, "--key-id", TestAPNsKey.keyID, "--team-id", TestAPNsKey.teamID,
        ])
    }

    /// `nse push` with the key and the certificate; its exit status, its answer line and its stderr.
    func push(_ server: ServeProcess, _ arguments: [String], payload: String? = nil, signed: Bool = true) async throws
        -> (status: Int32, answer: JSON?, stderr: String)
    {
        var all = ["push", "--url", server.url, "--cacert", certificate] + arguments
        if signed {
            all += ["--auth-key-file", key.path, "--key-id", TestAPNsKey.keyID, "--team-id", TestAPNsKey.teamID]
        }
        let output = try await runOffPool(TestSupport.nse, all + [payload ?? "-"], timeout: 60)
        return (
            output.status, try? JSON.parse(output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), output.stderr
        )
    }

    func write(_ name: String, _ text: String) throws -> String {
        try TestSupport.write(text, to: root + "/" + name)
        return root + "/" + name
    }

    @Test func signedPushesAreAcceptedOverH2AndDelivered() async throws {
        let server = try serve()
        defer { server.stop() }
        #expect(server.url.hasPrefix("https://127.0.0.1:"))
        let alert = try write("alert.json", #"{"aps":{"alert":{"title":"Hi","body":"there"},"mutable-content":1}}"#)
        let accepted = try await push(server, ["--device", root + "/bob", "--collapse-id", "c1"], payload: alert)
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.answer?["status"]?.intValue == 200)
        #expect(accepted.answer?["http_version"]?.stringValue == "2")
        let id = try #require(accepted.answer?["apns_id"]?.stringValue)
        #expect(accepted.answer?["apns_unique_id"]?.stringValue != nil)

        // A simctl .apns file: its target bundle is the topic; the given apns-id is echoed.
        let apns = try write(
            "push.apns", #"{"Simulator Target Bundle":"org.example.app","aps":{"alert":"from simctl"}}"#)
        let given = "0f2d5b3e-8c1a-4c3b-9a4e-7d6f5e4c3b2a"
        let simctl = try await push(
            server, ["--device-token", device.config.remoteToken, "--apns-id", given], payload: apns)
        #expect(simctl.status == 0, "\(simctl.stderr)")
        #expect(simctl.answer?["apns_id"]?.stringValue == given)

        // A voip push: the device's VoIP token and the .voip topic.
        let voip = try write("voip.json", #"{"aps":{},"call-id":"abc@example.org"}"#)
        let call = try await push(server, ["--device", root + "/bob", "--push-type", "voip"], payload: voip)
        #expect(call.status == 0, "\(call.stderr)")

        #expect(server.stop() == 0)
        let results = try recordedResults(root + "/bob")
        #expect(results.count == 3)
        let first = results.first { $0["apns_id"]?.stringValue == id }
        #expect(first?["outcome"]?.stringValue == "fallback" || first?["outcome"]?.stringValue == "rewritten")
        #expect(first?["collapse_id"]?.stringValue == "c1")
        #expect(
            results.first { $0["apns_id"]?.stringValue == given }?["display"]?["body"]?.stringValue == "from simctl")
        #expect(
            results.contains {
                $0["push_type"]?.stringValue == "voip"
                    && $0["token"]?.stringValue == device.config.voipToken.lowercased()
            })
    }

    @Test func refusalsPrintAPNsAnswerAndExit65() async throws {
        let server = try serve()
        defer { server.stop() }
        let alert = try write("alert.json", #"{"aps":{"alert":"x"}}"#)
        let unsigned = try await push(server, ["--device", root + "/bob"], payload: alert, signed: false)
        #expect(unsigned.status == 65)
        #expect(unsigned.answer?["status"]?.intValue == 403)
        #expect(unsigned.answer?["reason"]?.stringValue == "MissingProviderToken")
        #expect(unsigned.stderr.contains("403 MissingProviderToken"))

        let badToken = try await push(
            server, ["--device-token", String(repeating: "ab", count: 32), "--topic", "org.example.app"], payload: alert
        )
        #expect(badToken.status == 65 && badToken.answer?["reason"]?.stringValue == "BadDeviceToken")

        let large = try write("large.json", #"{"aps":{"alert":"\#(String(repeating: "x", count: 4100))"}}"#)
        let tooLarge = try await push(server, ["--device", root + "/bob"], payload: large)
        #expect(tooLarge.status == 65 && tooLarge.answer?["status"]?.intValue == 413)
        #expect(tooLarge.answer?["reason"]?.stringValue == "PayloadTooLarge")

        let otherKey = try TestAPNsKey(in: root, name: "other.p8")
        let wrongKey = try await runOffPool(
            TestSupport.nse,
            [
                "push", "--url", server.url, "--cacert", certificate, "--device", root + "/bob", "--auth-key-file",
                otherKey.path, "--key-id",
                TestAPNsKey.keyID, "--team-id", TestAPNsKey.teamID, alert,
            ], timeout: 60)
        #expect(wrongKey.status == 65 && wrongKey.stdout.contains("InvalidProviderToken"))
    }

    @Test func uninstallingTheAppWhileServingAnswersUnregisteredUntilReinstalled() async throws {
        let server = try serve()
        defer { server.stop() }
        let alert = try write("alert.json", #"{"aps":{"alert":"x"}}"#)
        let set = try TestSupport.nse([
            "device", "set", root + "/bob", "--uninstalled", "--callback-url", "http://127.0.0.1:9/results",
        ])
        #expect(set.status == 0, "\(set.stderr)")
        let uninstalledAt = try Device.open(at: root + "/bob").config.uninstalledAt
        #expect(uninstalledAt != nil)
        #expect(try Device.open(at: root + "/bob").config.callbackURL == "http://127.0.0.1:9/results")
        let gone = try await push(server, ["--device", root + "/bob"], payload: alert)
        #expect(gone.status == 65 && gone.answer?["status"]?.intValue == 410)
        #expect(gone.answer?["reason"]?.stringValue == "Unregistered")
        #expect(gone.answer?["timestamp"]?.intValue == uninstalledAt)
        let back = try TestSupport.nse(["device", "set", root + "/bob", "--installed", "--callback-url", "none"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try Device.open(at: root + "/bob").config.callbackURL == nil)
        let accepted = try await push(server, ["--device", root + "/bob"], payload: alert)
        #expect(accepted.status == 0 && accepted.answer?["status"]?.intValue == 200)
        let both = try TestSupport.nse(["device", "set", root + "/bob", "--installed", "--uninstalled"])
        #expect(both.status == 64)
        let badURL = try TestSupport.nse(["device", "set", root + "/bob", "--callback-url", "ftp://x"])
        #expect(badURL.status == 64 && badURL.stderr.contains("--callback-url"))
    }

    @Test func localProblemsHaveTheirOwnExitStatus() async throws {
        let server = try serve()
        defer { server.stop() }
        let alert = try write("alert.json", #"{"aps":{"alert":"x"}}"#)
        let missing = try await push(server, ["--device", root + "/bob"], payload: root + "/nope.json")
        #expect(missing.status == 66 && missing.stderr.contains("nope.json"))
        let malformed = try await push(
            server, ["--device", root + "/bob"], payload: try write("bad.json", "{\"aps\":"))
        // Sent byte for byte, as docs/serve.md says: a malformed payload on purpose gets the server's answer (APNs
        // takes it; the device judges it: `rejected`, MalformedPayload).
        #expect(malformed.status == 0 && malformed.answer?["status"]?.intValue == 200, "\(malformed.stderr)")
        let huge = try write("huge.json", #"{"aps":{"alert":"\#(String(repeating: "x", count: 1 << 20))"}}"#)
        let tooBig = try await push(server, ["--device", root + "/bob"], payload: huge)
        #expect(tooBig.status == 65 && tooBig.stderr.contains("larger than 1 MiB"), "\(tooBig.stderr)")
        let notKey = try write("not-a-key.p8", "hello")
        let badKey = try await runOffPool(
            TestSupport.nse,
            [
                "push", "--url", server.url, "--cacert", certificate, "--device", root + "/bob", "--auth-key-file",
                notKey, "--key-id", "K",
                "--team-id", "T", alert,
            ], timeout: 60)
        #expect(badKey.status == 78 && badKey.stderr.contains("not a PEM file"))
        // An untrusted certificate and a closed port: no answer at all.
        let untrusted = try await runOffPool(
            TestSupport.nse, ["push", "--url", server.url, "--device", root + "/bob", alert], timeout: 60)
        #expect(untrusted.status == 74, "\(untrusted.stderr)")
        let refused = try await runOffPool(
            TestSupport.nse, ["push", "--url", "http://127.0.0.1:9", "--device", root + "/bob", alert], timeout: 60)
        #expect(refused.status == 74 && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        let usage = try await runOffPool(TestSupport.nse, ["push", alert], timeout: 60)
        #expect(usage.status == 64)
        #expect(server.stop() == 0)
        let recorded = try recordedResults(root + "/bob")
        #expect(recorded.count == 1 && recorded.first?["outcome"] == "rejected", "\(recorded)")
        #expect(recorded.first?["apns_reason"] == "MalformedPayload")
        for output in [missing.stderr, malformed.stderr, badKey.stderr, untrusted.stderr, refused.stderr] {
            #expect(!output.contains("BEGIN"), "no key material in errors")
        }
    }
}
