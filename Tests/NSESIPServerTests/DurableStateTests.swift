import Foundation
import Logging
import NSESIP
import NSESIPServer
import Testing

/// Runs `body` with a user agent and closes it whatever happens.
func withAgent<T>(_ agent: SIPUserAgent = fastUA(), _ body: (SIPUserAgent) async throws -> T) async throws -> T {
    do {
        let value = try await body(agent)
        await agent.close()
        return value
    } catch {
        await agent.close()
        throw error
    }
}

/// Runs `python3 -c script args…` and waits (bounded) for it; true when it exited 0.
func runPython(_ script: String, _ arguments: [String]) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(20)
    while process.isRunning, Date() < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    while process.isRunning { usleep(10_000) }
    return process.terminationStatus == 0
}

/// Rows of the held-message table in `directory`'s database, read by another process (as an operator would).
func heldRowCount(_ directory: String) throws -> Int {
    let out = directory + "/.count"
    guard
        try runPython(
            "import sqlite3,sys; n=sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM held_message').fetchone()[0]; open(sys.argv[2],'w').write(str(n))",
            [directory + "/sip-server.db", out])
    else { throw TestError.setup("sqlite3 count failed") }
    defer { try? FileManager.default.removeItem(atPath: out) }
    return Int(try String(contentsOfFile: out, encoding: .utf8)) ?? -1
}

@Suite("Durable bindings and held messages (SQLite)", .serialized, .timeLimit(.minutes(2)))
struct DurableStateTests {
    @Test("A restarted server still knows a device registered before it: a MESSAGE after the restart is pushed")
    func bindingSurvivesRestart() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(300))
        config.databaseDirectory = dir.file("db")

        try await withSIPServer(config) { _, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.tcp), expires: 600)
                #expect(registered.statusCode == 200)
            }
        }
        #expect(FileManager.default.fileExists(atPath: dir.file("db/sip-server.db")))

        try await withSIPServer(config) { server, addresses in
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 1)
            try await withAgent { sender in
                let sent = try await sendFromAlice(
                    sender, proxy: addresses.proxy(.tcp), body: "after restart", callID: "restart-1")
                #expect(sent.statusCode == 202)
            }
            let record = try #require(try await push.waitForRecords(1).first)
            #expect(record.path == "/3/device/\(remoteToken)")
            #expect(record.body.contains("\"call-id\":\"restart-1\""))
            // The remaining lifetime came back, not a fresh one.
            try await withAgent { device in
                let collector = MessageCollector(device)
                let again = try await registerDevice(device, proxy: addresses.proxy(.tcp), expires: 600)
                #expect(again.statusCode == 200)
                #expect(try await collector.waitForCount(1)[0].callID == "restart-1")
            }
        }
    }

    @Test("A binding that expired while the server was down is dropped on start")
    func expiredBindingDropped() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(200))
        config.databaseDirectory = dir.file("db")
        try await withSIPServer(config) { _, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.tcp), expires: 1)
                #expect(registered.statusCode == 200)
            }
        }
        try await Task.sleep(for: .milliseconds(1500))
        try await withSIPServer(config) { server, addresses in
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 0)
            try await withAgent { sender in
                // The AOR is known (it registered once) but has no binding: 480, nothing held.
                let sent = try await sendFromAlice(sender, proxy: addresses.proxy(.tcp), body: "late", callID: "late-1")
                #expect(sent.statusCode == 480)
            }
            #expect(await server.undeliveredCallIDs().isEmpty)
        }
    }

    @Test("UDP: a binding restored on the same listener port is live again: the MESSAGE goes straight to the device")
    func udpBindingLiveAfterRestart() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var config = serverConfiguration([.udp], acceptTimeout: .seconds(20))
        config.databaseDirectory = dir.file("db")
        let device = fastUA()
        let collector = MessageCollector(device)
        try await withAgent(device) { device in
            let port = try await withSIPServer(config) { _, addresses -> Int in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.udp), push: false)
                #expect(registered.statusCode == 200)
                return addresses[0].port
            }
            config.listeners = [SIPServerConfiguration.Listener(transport: .udp, host: "127.0.0.1", port: port)]
            try await withSIPServer(config) { server, addresses in
                #expect(await server.bindingCount(aor: "sip:bob@example.org") == 1)
                try await withAgent { sender in
                    let sent = try await sendFromAlice(
                        sender, proxy: addresses.proxy(.udp), body: "over udp", callID: "udp-restart-1")
                    #expect(sent.statusCode == 200)
                }
                let received = try await collector.waitForCount(1)
                #expect(received[0].callID == "udp-restart-1")
                #expect(String(decoding: received[0].body, as: UTF8.self) == "over udp")
            }
        }
    }

    @Test(
        "Today's JSON files are imported on first open and removed; an unreadable one is moved aside and reported once")
    func migratesJSONDirectory() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let db = dir.file("db")
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let now = Int(Date().timeIntervalSince1970)
        let body = Data("migrated body".utf8).base64EncodedString()
        let held =
            #"{"version":1,"id":"0123456789abcdef0123456789abcdef","aor":"sip:bob@example.org","call-id":"migrated-1","headers":[["From","<sip:alice@example.org>;tag=a1"],["To","<sip:bob@example.org>"],["Call-ID","migrated-1"],["Content-Type","text/plain"]],"body":""#
            + body
            + #"","received-at":\#(now),"expires-at":\#(now + 600),"delivered":false,"delivered-at":null,"attempts":0,"order":\#(now)000000000}"#
        let delivered =
            #"{"version":1,"id":"fedcba9876543210fedcba9876543210","aor":"sip:bob@example.org","call-id":"migrated-0","headers":[],"body":"","received-at":\#(now - 10),"expires-at":\#(now + 600),"delivered":true,"delivered-at":\#(now - 5)}"#
        try held.write(toFile: db + "/0123456789abcdef0123456789abcdef.json", atomically: false, encoding: .utf8)
        try delivered.write(toFile: db + "/fedcba9876543210fedcba9876543210.json", atomically: false, encoding: .utf8)
        try "not json".write(toFile: db + "/broken.json", atomically: false, encoding: .utf8)
        // Held by a version that did not refuse control characters: delivering it would break the device.
        let evil =
            #"{"version":1,"id":"e","aor":"sip:bob@example.org","call-id":"evil\u0000id@x","headers":[["Call-ID","evil\u0000id@x"]],"body":"","received-at":\#(now),"expires-at":\#(now + 600),"delivered":false,"delivered-at":null}"#
        try evil.write(toFile: db + "/evil.json", atomically: false, encoding: .utf8)
        try "{\"partial".write(toFile: db + "/cafebabe.json.tmp.4242", atomically: false, encoding: .utf8)

        let capture = LogCapture()
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(200))
        config.databaseDirectory = db
        try await withSIPServer(config, logger: capture.logger()) { server, addresses in
            #expect(await server.undeliveredCallIDs() == ["migrated-1"])
            let left = try FileManager.default.contentsOfDirectory(atPath: db)
            #expect(!left.contains { $0.hasSuffix(".json") || $0.contains(".json.tmp") }, "left: \(left)")
            #expect(FileManager.default.fileExists(atPath: db + "/unreadable/broken.json"))
            #expect(FileManager.default.fileExists(atPath: db + "/unreadable/evil.json"))
            let reports = capture.all.filter { $0.contains("unreadable") }
            #expect(reports.count == 1)
            #expect(
                reports.allSatisfy {
                    $0.contains("broken.json,evil.json") && !$0.contains("not json") && !$0.contains("evil\u{0}")
                })
            try await withAgent { device in
                let collector = MessageCollector(device)
                #expect(try await registerDevice(device, proxy: addresses.proxy(.tcp)).statusCode == 200)
                let received = try await collector.waitForCount(1)
                #expect(received[0].callID == "migrated-1")
                #expect(String(decoding: received[0].body, as: UTF8.self) == "migrated body")
                #expect(received[0].from?.tag == "a1")
                // The device has the message once its 200 has reached the server (the app may see it a moment before).
                try await eventually("delivered") { await server.undeliveredCallIDs().isEmpty }
            }
        }
        // A second start imports nothing again.
        try await withSIPServer(config) { server, _ in
            #expect(await server.undeliveredCallIDs().isEmpty)
        }
    }

    @Test("A file that is not a database: start fails with one line naming the file, and nothing is overwritten")
    func corruptDatabaseRefused() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let db = dir.file("db")
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: URL(fileURLWithPath: db + "/sip-server.db"))
        var config = serverConfiguration([.tcp])
        config.databaseDirectory = db
        let server = SIPServer(configuration: config, logger: quietLogger)
        do {
            _ = try await server.start()
            Issue.record("a corrupt database was accepted")
        } catch let error as SIPServerError {
            #expect(error.code == .configuration)
            #expect(error.description.contains(db + "/sip-server.db"))
            #expect(error.description.contains("not a database"))
            #expect(!error.description.contains("\n"))
        }
        await server.shutdown()
        #expect(try Data(contentsOf: URL(fileURLWithPath: db + "/sip-server.db")) == garbage)
    }

    @Test("A MESSAGE that cannot be stored is refused with 500 and a reason, never accepted and lost")
    func unstorableMessageRefused() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(300))
        config.databaseDirectory = dir.file("db")
        try await withSIPServer(config) { server, addresses in
            try await withAgent { device in
                let registered = try await registerDevice(device, proxy: addresses.proxy(.tcp))
                #expect(registered.statusCode == 200)
            }
            // Break the store under the running server (as a damaged file would).
            let broke = try runPython(
                "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('ALTER TABLE held_message RENAME TO gone'); c.commit()",
                [dir.file("db/sip-server.db")])
            #expect(broke)
            try await withAgent { sender in
                let sent = try await sendFromAlice(
                    sender, proxy: addresses.proxy(.tcp), body: "cannot keep", callID: "unstored-1")
                #expect(sent.statusCode == 500)
                #expect(sent.reasonPhrase == "Message Not Stored")
            }
            #expect(await server.undeliveredCallIDs().isEmpty)
            #expect(
                !(await server.eventLog()).contains {
                    if case .held = $0 { return true }
                    return false
                })
        }
    }
}
