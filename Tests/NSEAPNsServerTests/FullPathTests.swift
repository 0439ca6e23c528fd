import Foundation
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// The whole path with the built binaries, as a Flexisip deployment runs it: `nse sip-server` holds a sealed
/// MESSAGE and pushes its Call-ID (h2 over TLS, signed provider token) to `nse serve`, which runs the extension;
/// the extension registers, fetches the MESSAGE by Call-ID, decrypts it, and the result is read back over HTTP.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FullPathTests {
    @Test func aSealedMessageHeldBySIPServerArrivesRewrittenThroughServe() async throws {
        let root = try TestSupport.temporaryDirectory("nse-full-path")
        let bob = root + "/bob"
        let created = try TestSupport.nse(["device", "init", bob, "--bundle-id", "org.example.app", "--filtering"])
        #expect(created.status == 0, "\(created.stderr)")
        let token = try Device.open(at: bob).config.remoteToken
        let key = try TestAPNsKey(in: root)
        let files = try TestSupport.selfSignedCertificate(in: root)
        let (certificate, certificateKey) = (files.certificate, files.key)

        let serve = try ServeProcess([
            "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", certificateKey, "--device", bob,
            "--auth-key-file", key.path, "--key-id", TestAPNsKey.keyID, "--team-id", TestAPNsKey.teamID,
        ])
        defer { serve.stop() }
        let sipServer = try StreamingProcess(
            TestSupport.nse,
            [
                "sip-server", "--events", "--listen", "tcp:127.0.0.1:0", "--push-url", serve.url, "--push-ca",
                certificate,
                "--push-auth-key-file", key.path, "--push-key-id", TestAPNsKey.keyID, "--push-team-id",
                TestAPNsKey.teamID,
            ])
        defer { _ = sipServer.waitForExit(seconds: 0) }
        let firstLine =
            try await sipServer.wait(seconds: 15) { $0.contains("\n") }.split(separator: "\n").first.map(String.init)
            ?? ""
        let proxy = try #require(
            try JSON.parse(firstLine)["listening"]?.arrayValue?.first?["uri"]?.stringValue, "\(firstLine)")

        // Bob's app gets its SIP account while nse serve runs (the server re-reads device.json), then registers.
        let account = try TestSupport.nse([
            "device", "set", bob, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy,
        ])
        #expect(account.status == 0, "\(account.stderr)")
        let registered = try TestSupport.nse(["device", "register", bob])
        #expect(registered.status == 0, "\(registered.stderr)")

        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org", "--text",
            "Lunch at 1?",
            "--seal-to", bob, "--display-name", "Alice", "--timeout", "10",
        ])
        #expect(sent.status == 0, "\(sent.stderr)")
        let callID = try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)

        // The SIP server's push was accepted by nse serve (200), and the result is recorded.
        let events = try await sipServer.wait { $0.contains("\"pushed\"") }
        let pushed = events.split(separator: "\n").compactMap { try? JSON.parse(String($0)) }.first {
            $0["event"]?.stringValue == "pushed"
        }
        #expect(pushed?["status"]?.intValue == 200, "\(pushed?.serialized() ?? events)")
        var recorded: JSON?
        for _ in 0..<200 {
            let output = try await runOffPool(
                "/usr/bin/curl",
                [
                    "-sS", "--http2", "--cacert", certificate, "--max-time", "10",
                    "\(serve.url)/v1/devices/\(token)/notifications",
                ],
                timeout: 20)
            recorded = (try? JSON.parse(output.stdout, options: .init(requireObject: false)))?.arrayValue?.first
            if recorded != nil { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let result = try #require(recorded)
        #expect(result["outcome"]?.stringValue == "rewritten", "\(result["reason"] ?? .null)")
        #expect(result["display"]?["title"]?.stringValue == "Alice")
        #expect(result["display"]?["body"]?.stringValue == "Lunch at 1?")
        #expect(result["extension"]?["info"]?["call_ids_received"]?.arrayValue?.contains(.string(callID)) == true)
        #expect(result["apns_id"]?.stringValue != nil)
        #expect(serve.stop() == 0)
    }
}
