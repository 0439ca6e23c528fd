import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse sip-server --record DIR`, as a server team runs it: the push it sends for a held MESSAGE becomes a replay
/// case with the messages it held, and once the case names the phone's key, `nse replay` shows that message.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SIPServerRecordingTests {
    @Test func aCaseRecordedByTheServerReplaysOnceItNamesThePhonesKey() throws {
        let root = try TestSupport.temporaryDirectory("nse-sip-record")
        let cases = root + "/cases"
        // The push goes nowhere (a closed port): the case is written before it is sent.
        let server = try SIPServerProcess([
            "--listen", "tcp:127.0.0.1:0", "--push-url", "http://127.0.0.1:9", "--record", cases,
        ])
        let proxy = try #require(server.uris["tcp"])
        let bob = root + "/bob"
        let created = try TestSupport.nse([
            "device", "init", bob, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy,
        ])
        try #require(created.status == 0, "\(created.stderr)")
        #expect(try TestSupport.nse(["device", "register", bob]).status == 0)
        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org", "--text",
            "Lunch at 1?", "--seal-to", bob, "--display-name", "Alice", "--timeout", "10",
        ])
        try #require(sent.status == 0, "\(sent.stderr)")
        let callID = try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)
        #expect(server.waitFor("pushed", ["call_id": callID]) != nil)
        server.stop()

        let files = try FileManager.default.contentsOfDirectory(atPath: cases).filter { $0.hasSuffix(".json") }
        try #require(files.count == 1, "\(files)")
        let path = cases + "/" + files[0]
        var recorded = try #require(try JSON.parse(String(contentsOfFile: path, encoding: .utf8)).objectValue)
        #expect(recorded["recorded"]?["call_id"]?.stringValue == callID)
        #expect(recorded["payload"]?["call-id"]?.stringValue == callID)
        #expect(recorded["expect"] == ["outcome": "rewritten", "info": ["call_id": .string(callID)]])
        let held = try #require(recorded["sip"]?["held"]?.arrayValue?.first)
        #expect(held["body"]?.stringValue?.contains("nse1.") == true, "sealed content stays sealed: \(held)")
        #expect(
            !(String(data: try Data(contentsOf: URL(fileURLWithPath: path)), encoding: .utf8) ?? "").contains("Lunch"))

        // Without the phone's key the replay device cannot open it.
        let unopened = try TestSupport.nse(["replay", path])
        #expect(unopened.status == 1, "\(unopened.stdout)")
        // Named, it shows the message the push was for.
        var device = recorded["device"]?.objectValue ?? [:]
        device["key_file"] = .string(bob + "/keys/private.key")
        recorded["device"] = .object(device)
        try TestSupport.write(JSON.object(recorded).serialized(), to: path)
        let replayed = try TestSupport.nse(["replay", path])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
    }
}
