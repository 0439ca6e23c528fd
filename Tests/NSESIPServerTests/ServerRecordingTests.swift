import Foundation
import NSEJSON
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

/// `nse sip-server --record DIR`: each push sent for a held MESSAGE written as a replay case, with what the address
/// held, bodies as held; a plain body the push was not for is kept by its length only (docs/replay.md).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ServerRecordingTests {
    @Test func aPushForAHeldMessageIsRecordedWithWhatTheAddressHeld() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(300))
        let recording = try ServerCaseRecording(directory: dir.file("cases"))
        config.recording = recording
        let sender = fastUA()
        try await withSIPServer(config, closing: [sender]) { _, addresses in
            let proxy = addresses.proxy(.tcp)
            let device = fastUA()
            #expect(try await registerDevice(device, proxy: proxy).statusCode == 200)
            await device.close()
            try await Task.sleep(for: .milliseconds(100))
            let first = "an older secret, never pushed for"
            _ = try await sendFromAlice(sender, proxy: proxy, body: first, callID: "older@alice")
            let second = "the one the push is for"
            _ = try await sendFromAlice(sender, proxy: proxy, body: second, callID: "newer@alice")
            _ = try await push.waitForRecords(2)
        }
        #expect(recording.count == 2)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.file("cases")).sorted()
        try #require(files.count == 2, "\(files)")
        let cases = try files.map { try JSON.parse(String(contentsOfFile: dir.file("cases/" + $0), encoding: .utf8)) }
        let last = try #require(cases.first { $0["recorded"]?["call_id"] == "newer@alice" })
        #expect(last["recorded"]?["by"] == "nse sip-server")
        #expect(last["push_type"] == "alert")
        #expect(last["headers"]?["apns-priority"] == "10")
        #expect(last["payload"]?["call-id"] == "newer@alice")
        #expect(last["sip"]?["transport"] == "tcp")
        #expect(last["expect"] == ["outcome": "rewritten", "info": ["call_id": "newer@alice"]])
        let held = try #require(last["sip"]?["held"]?.arrayValue)
        #expect(held.map { $0["call_id"]?.stringValue } == ["older@alice", "newer@alice"])
        // The message the push is for is kept as held; the other plain one by its length only.
        #expect(held[1]["body"]?.stringValue == "the one the push is for")
        #expect(held[1]["content_type"]?.stringValue?.hasPrefix("text/plain") == true)
        #expect(held[0]["body"] == nil)
        #expect(held[0]["redacted_bytes"]?.intValue == Int64("an older secret, never pushed for".utf8.count))
        // The case of the push for the older message keeps that one's body: it is what that push showed.
        let older = try #require(cases.first { $0["recorded"]?["call_id"] == "older@alice" })
        #expect(older["sip"]?["held"]?.arrayValue?.first?["body"] == "an older secret, never pushed for")
        #expect(!last.serialized().contains("an older secret"))
        #expect(held[0]["from"] == "sip:alice@example.org")
    }

    @Test func aHeldCallsPushIsRecordedWithTheCallToPlaceAgain() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        var config = serverConfiguration([.udp], push: push)
        let recording = try ServerCaseRecording(directory: dir.file("cases"))
        config.recording = recording
        try await withSIPServer(config) { _, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.udp))
                #expect(registered.statusCode == 200)
            }
            let port = try #require(addresses.first { $0.transport == .udp }).port
            let caller = HeldCallTransactionTests()
            let socket = try HeldCallTransactionTests.Caller(serverPort: port)
            let offer =
                "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                + "m=audio 4000 RTP/AVP 0\r\nm=video 4002 RTP/AVP 96\r\n"
            socket.send(caller.request("INVITE", cseq: "1 INVITE", port: socket.port, body: offer))
            #expect(socket.status() == 100)
            _ = try await push.waitForRecords(1)
            socket.send(caller.request("CANCEL", cseq: "1 CANCEL", port: socket.port))
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.file("cases"))
        try #require(files.count == 1, "\(files)")
        let recorded = try JSON.parse(String(contentsOfFile: dir.file("cases/" + files[0]), encoding: .utf8))
        #expect(recorded["push_type"] == "voip", "\(recorded)")
        #expect(recorded["sip"]?["call"] == ["call_id": "held-udp-1", "from": "sip:alice@example.org", "video": true])
        #expect(
            recorded["expect"]
                == [
                    "outcome": "not-invoked", "call": ["call_id": "held-udp-1"],
                ])
        // Replayed, the case's caller places the same call and the phone's app reports it as the server expects.
        let replayed = try TestSupport.nse(["replay", dir.file("cases/" + files[0])])
        #expect(replayed.status == 0, "\(replayed.stdout)\(replayed.stderr)")
    }
}
