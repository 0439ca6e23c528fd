import Foundation
import NSESIP
import NSESIPServer
import Testing

@Suite("Control characters: refused in header lines, kept in bodies", .serialized, .timeLimit(.minutes(2)))
struct HeaderValidationTests {
    @Test(
        "A MESSAGE whose Call-ID holds a NUL is answered 400 naming the header, not held and not pushed",
        arguments: ["evil\u{0}id@x", "evil\u{1B}[2Jid@x", "evil\rid@x", "evil\u{7F}id@x"])
    func controlCharacterInCallIDRefused(callID: String) async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let capture = LogCapture()
        var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(300))
        config.databaseDirectory = dir.file("db")
        try await withSIPServer(config, logger: capture.logger()) { server, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.tcp))
                #expect(registered.statusCode == 200)
            }
            try await withAgent { sender in
                let sent = try await sendFromAlice(
                    sender, proxy: addresses.proxy(.tcp), body: "evil body", callID: callID)
                #expect(sent.statusCode == 400)
                #expect(sent.reasonPhrase == "Invalid Call-ID Header")
                // The same connection still works: a clean MESSAGE after it is held and pushed.
                let clean = try await sendFromAlice(
                    sender, proxy: addresses.proxy(.tcp), body: "real", callID: "real-1")
                #expect(clean.statusCode == 202)
            }
            let records = try await push.waitForRecords(1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(push.records.count == 1)
            #expect(records[0].body.contains("\"call-id\":\"real-1\""))
            #expect(await server.undeliveredCallIDs() == ["real-1"])
            #expect(capture.all.allSatisfy { !$0.contains("evil") }, "a log line quoted the header value")
        }
    }

    @Test("Any header line with a control character is refused, and the reason names the header, not its value")
    func controlCharacterInOtherHeaderRefused() async throws {
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(300))
        config.messageAcceptTimeout = .milliseconds(300)
        try await withSIPServer(config) { server, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.tcp))
                #expect(registered.statusCode == 200)
            }
            try await withAgent { sender in
                let sent = try await sender.sendMessage(
                    to: bobAOR, from: aliceAOR, proxy: addresses.proxy(.tcp),
                    contentType: "text/plain", body: Array("x".utf8),
                    extraHeaders: SIPHeaders([("Subject", "hello\u{0}secret")]),
                    callID: "subject-nul-1")
                #expect(sent.statusCode == 400)
                #expect(sent.reasonPhrase == "Invalid Subject Header")
            }
            #expect(await server.undeliveredCallIDs().isEmpty)
        }
    }

    @Test("A body with NUL bytes is held and delivered byte for byte")
    func nulInBodyDeliveredExactly() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(300))
        config.databaseDirectory = dir.file("db")
        let body: [UInt8] = Array("PRIVATE".utf8) + [0x00, 0x01, 0xFF, 0x00] + Array("TEXT\r\n".utf8)
        try await withSIPServer(config) { server, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.tcp))
                #expect(registered.statusCode == 200)
            }
            try await withAgent { sender in
                let sent = try await sender.sendMessage(
                    to: bobAOR, from: aliceAOR, proxy: addresses.proxy(.tcp),
                    contentType: "application/octet-stream", body: body,
                    callID: "nul-body-1")
                #expect(sent.statusCode == 202)
            }
            #expect(await server.undeliveredCallIDs() == ["nul-body-1"])
        }
        // Through the database and a restart, too.
        try await withSIPServer(config) { server, addresses in
            try await withAgent { device in
                let collector = MessageCollector(device)
                #expect(try await registerDevice(device, proxy: addresses.proxy(.tcp)).statusCode == 200)
                let received = try await collector.waitForCount(1)
                #expect(received[0].callID == "nul-body-1")
                #expect(received[0].body == body)
            }
            try await eventually("delivered") { await server.undeliveredCallIDs().isEmpty }
        }
    }

    @Test("The parser refuses a control character in a start line; header values are kept for the server to judge")
    func parserStartLine() throws {
        #expect(throws: SIPError.self) {
            _ = try SIPParser.parse(
                "MESSAGE sip:bo\u{0}b@example.org SIP/2.0\r\nCall-ID: a\r\nContent-Length: 0\r\n\r\n")
        }
        let message = try SIPParser.parse(
            "MESSAGE sip:bob@example.org SIP/2.0\r\nCall-ID: a\u{0}b\r\nSubject: ok\tfine\r\nContent-Length: 0\r\n\r\n")
        #expect(message.headers.firstInvalidField == "Call-ID")
        let clean = try SIPParser.parse(
            "MESSAGE sip:bob@example.org SIP/2.0\r\nCall-ID: a\r\nSubject: ok\tfine é\r\nContent-Length: 0\r\n\r\n")
        #expect(clean.headers.firstInvalidField == nil)
    }
}
