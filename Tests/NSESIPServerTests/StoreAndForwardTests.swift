import Foundation
import NSESIP
import NSESIPServer
import NSETestSupport
import Testing

@Suite("Fork-late store-and-forward", .serialized, .timeLimit(.minutes(2)))
struct StoreAndForwardTests {
    @Test("REGISTER with push parameters stores the binding and answers 200 with the Contact")
    func registerStoresBinding() async throws {
        let device = fastUA()
        try await withSIPServer(serverConfiguration([.tcp]), closing: [device]) { server, addresses in
            #expect(addresses.count == 1 && addresses[0].port != 0)
            let result = try await registerDevice(device, proxy: addresses.proxy(.tcp), expires: 600)
            #expect(result.statusCode == 200)
            #expect(result.expires == 600)
            #expect(result.response.headers.contacts.first?.uri.parameters.value(of: "pn-provider") == "apns.dev")
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 1)
            let events = await server.eventLog()
            #expect(
                events.contains {
                    if case .registered(let aor, _, 600, .tcp) = $0 { return aor == "sip:bob@example.org" }
                    return false
                })
            // Unregister removes it.
            let gone = try await registerDevice(device, proxy: addresses.proxy(.tcp), expires: 0)
            #expect(gone.statusCode == 200)
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 0)
        }
    }

    @Test("TCP: held MESSAGE → APNs push → device re-REGISTERs → original Call-ID and body delivered; sender gets 202")
    func tcpHoldPushDeliver() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let capture = LogCapture()
        var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(400))
        config.databaseDirectory = dir.file("db")
        let sender = fastUA()
        let device2 = fastUA()
        try await withSIPServer(config, logger: capture.logger(), closing: [device2, sender]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            // The app registers, then goes to the background (connection closed).
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))

            let secret = "top secret plaintext 42"
            let sent = try await sendFromAlice(sender, proxy: proxy, body: secret, callID: "held-call-id-1@alice")
            #expect(sent.statusCode == 202)
            #expect(await server.undeliveredCallIDs(aor: "sip:bob@example.org") == ["held-call-id-1@alice"])
            // Persisted before the answer.
            #expect(try heldRowCount(dir.file("db")) == 1)

            // The push: URL, path, headers and Flexisip's body shape.
            let record = try #require(try await push.waitForRecords(1).first)
            #expect(record.path == "/3/device/\(remoteToken)")
            #expect(record.headers["apns-topic"] == "org.example.nse")
            #expect(record.headers["apns-push-type"] == "alert")
            #expect(record.headers["apns-priority"] == "10")
            let expiration = try #require(Int(record.headers["apns-expiration"] ?? ""))
            let expected = Int(Date().timeIntervalSince1970) + 2_592_000
            #expect(abs(expiration - expected) < 120)
            #expect(record.version == "HTTP/1.1")  // prior knowledge refused by the test receiver → HTTP/1.1 fallback
            #expect(push.refusedRequestLines.first == "PRI * HTTP/2.0")  // HTTP/2 prior knowledge was tried first
            let prefix =
                "{\"aps\":{\"alert\":{\"loc-key\":\"IM_MSG\",\"loc-args\":[\"sip:alice@example.org\"]},\"sound\":\"msg.caf\",\"mutable-content\":1,\"badge\":1},\"from-uri\":\"sip:alice@example.org\",\"display-name\":\"\",\"call-id\":\"held-call-id-1@alice\",\"pn_ttl\":2592000,\"uuid\":\"<urn:uuid:6f2b1c3a-0000-4000-8000-00000000b0b0>\",\"send-time\":\""
            #expect(record.body.hasPrefix(prefix), "push body: \(record.body)")
            #expect(record.body.hasSuffix("\",\"chat-room-addr\":\"\",\"customPayload\":{}}"))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(record.body.utf8)) as? [String: Any])
            let sendTime = try #require(json["send-time"] as? String)
            #expect(sendTime.count == 19 && sendTime.dropFirst(10).first == " ")
            try await eventually("push event") {
                await server.eventLog().contains {
                    if case .pushed(_, "held-call-id-1@alice", _, 200, _) = $0 { return true }
                    return false
                }
            }

            // The extension wakes up and registers again: the held MESSAGE arrives with its original identity.
            let d2 = device2
            let collector = MessageCollector(d2)
            #expect(try await registerDevice(d2, proxy: proxy).statusCode == 200)
            let received = try await collector.waitForCount(1)
            #expect(received[0].callID == "held-call-id-1@alice")
            #expect(String(decoding: received[0].body, as: UTF8.self) == secret)
            #expect(received[0].from?.uri == aliceAOR)
            #expect(received[0].from?.tag != nil)
            #expect(received[0].to?.uri == bobAOR)
            #expect(received[0].contentType == "text/plain")
            #expect(received[0].request.uri.parameters.value(of: "pn-provider") == "apns.dev")  // R-URI = contact
            try await eventually("delivered") { await server.undeliveredCallIDs().isEmpty }
            #expect(
                count(await server.eventLog()) {
                    if case .delivered(_, "held-call-id-1@alice", _, _, _) = $0 { return true }
                    return false
                } == 1)
            // Bodies are never logged.
            #expect(!capture.all.isEmpty)
            #expect(capture.all.allSatisfy { !$0.contains(secret) })
        }
    }

    @Test("UDP: device re-REGISTERs within the accept timeout → sender gets 200")
    func udpDeliveryWithinAcceptTimeout() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let sender = fastUA()
        let device2 = fastUA()
        try await withSIPServer(
            serverConfiguration([.udp], push: push, acceptTimeout: .seconds(20)), closing: [device2, sender]
        ) { server, addresses in
            let proxy = addresses.proxy(.udp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            async let sent = sendFromAlice(sender, proxy: proxy, body: "hello over udp", callID: "udp-call-1")
            _ = try await push.waitForRecords(1)
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: proxy).statusCode == 200)
            let received = try await collector.waitForCount(1)
            #expect(received[0].callID == "udp-call-1")
            #expect(String(decoding: received[0].body, as: UTF8.self) == "hello over udp")
            #expect(try await sent.statusCode == 200)
        }
    }

    @Test("TLS: hold and deliver over a TLS listener with a self-signed test certificate")
    func tlsHoldAndDeliver() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let files = try TestSupport.selfSignedCertificate(in: dir.path)
        let (cert, key) = (files.certificate, files.key)
        var config = serverConfiguration([.tls, .tcp], acceptTimeout: .milliseconds(300))
        config.tls = SIPServerConfiguration.TLSFiles(certificatePath: cert, keyPath: key)
        let sender = fastUA()
        let device2 = tlsUA(cert: cert)
        try await withSIPServer(config, closing: [device2, sender]) { server, addresses in
            let tls = addresses.proxy(.tls)
            let device1 = tlsUA(cert: cert)
            #expect(try await registerDevice(device1, proxy: tls).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: addresses.proxy(.tcp), body: "over tls", callID: "tls-call-1")
                    .statusCode == 202)
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: tls).statusCode == 200)
            let received = try await collector.waitForCount(1)
            #expect(received[0].callID == "tls-call-1")
            #expect(String(decoding: received[0].body, as: UTF8.self) == "over tls")
            #expect(received[0].headers.topVia?.transport == "TLS")
        }
    }

    @Test("A live TCP flow gets the MESSAGE at once and the sender gets the device's 200")
    func liveForward() async throws {
        let device = fastUA()
        let sender = fastUA()
        try await withSIPServer(serverConfiguration([.tcp], acceptTimeout: .seconds(20)), closing: [device, sender]) {
            server, addresses in
            let proxy = addresses.proxy(.tcp)
            let collector = MessageCollector(device)
            #expect(try await registerDevice(device, proxy: proxy, push: false).statusCode == 200)
            let sent = try await sendFromAlice(sender, proxy: proxy, body: "live", callID: "live-call-1")
            #expect(sent.statusCode == 200)
            let received = try await collector.waitForCount(1)
            #expect(received[0].callID == "live-call-1")
            #expect(await server.undeliveredCallIDs().isEmpty)
        }
    }

    @Test("Two held messages for one AOR are both delivered, in order, on one REGISTER")
    func twoHeldMessages() async throws {
        let sender = fastUA()
        let device2 = fastUA()
        try await withSIPServer(
            serverConfiguration([.tcp], acceptTimeout: .milliseconds(200)), closing: [device2, sender]
        ) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await sendFromAlice(sender, proxy: proxy, body: "first", callID: "two-1").statusCode == 202)
            #expect(try await sendFromAlice(sender, proxy: proxy, body: "second", callID: "two-2").statusCode == 202)
            #expect(await server.undeliveredCallIDs() == ["two-1", "two-2"])
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: proxy).statusCode == 200)
            let received = try await collector.waitForCount(2)
            #expect(received.map(\.callID) == ["two-1", "two-2"])
            #expect(received.map { String(decoding: $0.body, as: UTF8.self) } == ["first", "second"])
            try await eventually("both delivered") { await server.undeliveredCallIDs().isEmpty }
        }
    }

    @Test("Persistence: a restarted server on the same db delivers once, and never twice")
    func persistenceAcrossRestart() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(200))
        config.databaseDirectory = dir.file("db")

        // Server A holds the message.
        let sender = fastUA()
        try await withSIPServer(config, closing: [sender]) { _, addresses in
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "survives restarts", callID: "persist-1").statusCode
                    == 202)
        }
        // The database and its folder are private to the user.
        let fileAttributes = try FileManager.default.attributesOfItem(atPath: dir.file("db/sip-server.db"))
        #expect((fileAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let dbAttributes = try FileManager.default.attributesOfItem(atPath: dir.file("db"))
        #expect((dbAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

        // Server B: the device registers → delivered once.
        let device2 = fastUA()
        let collector2 = MessageCollector(device2)
        try await withSIPServer(config, closing: [device2]) { serverB, addresses in
            let proxyB = addresses.proxy(.tcp)
            #expect(await serverB.undeliveredCallIDs() == ["persist-1"])
            #expect(try await registerDevice(device2, proxy: proxyB).statusCode == 200)
            let received = try await collector2.waitForCount(1)
            #expect(received[0].callID == "persist-1")
            #expect(String(decoding: received[0].body, as: UTF8.self) == "survives restarts")
            try await eventually("delivered on B") { await serverB.undeliveredCallIDs().isEmpty }
            // Registering again on B delivers nothing.
            #expect(try await registerDevice(device2, proxy: proxyB).statusCode == 200)
            try await Task.sleep(for: .milliseconds(500))
            #expect(collector2.messages.count == 1)
        }

        // Server C on the same db: the delivered mark survived.
        let device3 = fastUA()
        let collector3 = MessageCollector(device3)
        try await withSIPServer(config, closing: [device3]) { serverC, addresses in
            let proxyC = addresses.proxy(.tcp)
            #expect(await serverC.undeliveredCallIDs().isEmpty)
            #expect(try await registerDevice(device3, proxy: proxyC).statusCode == 200)
            try await Task.sleep(for: .milliseconds(500))
            #expect(collector3.messages.isEmpty)
        }
    }

    @Test("Held messages expire after their lifetime and are not delivered")
    func expiry() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        var config = serverConfiguration([.tcp], acceptTimeout: .milliseconds(200))
        config.heldMessageLifetime = 1
        config.databaseDirectory = dir.file("db")
        let sender = fastUA()
        let device2 = fastUA()
        try await withSIPServer(config, closing: [device2, sender]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "short lived", callID: "expire-1").statusCode == 202
            )
            try await eventually("expired event", seconds: 10) {
                await server.eventLog().contains {
                    if case .expired(_, "expire-1", _, _) = $0 { return true }
                    return false
                }
            }
            #expect(await server.undeliveredCallIDs().isEmpty)
            #expect(try heldRowCount(dir.file("db")) == 0)
            let collector = MessageCollector(device2)
            #expect(try await registerDevice(device2, proxy: proxy).statusCode == 200)
            try await Task.sleep(for: .milliseconds(400))
            #expect(collector.messages.isEmpty)
        }
    }

    @Test("Unknown AOR → 404; known AOR without binding → 480")
    func unreachable() async throws {
        let agent = fastUA()
        try await withSIPServer(serverConfiguration([.udp]), closing: [agent]) { (server, addresses) async throws in
            let proxy = addresses.proxy(.udp)
            #expect(try await sendFromAlice(agent, proxy: proxy, body: "x", callID: "nobody-1").statusCode == 404)
            #expect(try await registerDevice(agent, proxy: proxy, expires: 60).statusCode == 200)
            #expect(try await registerDevice(agent, proxy: proxy, expires: 0).statusCode == 200)
            #expect(try await sendFromAlice(agent, proxy: proxy, body: "x", callID: "nobody-2").statusCode == 480)
        }
    }

    /// A device token registered twice (the app registered again under another instance) is one binding, pushed once
    /// per message, as Flexisip does: two pushes would wake two extensions for one message (issue #31, defect 5).
    @Test func oneTokenOnTwoBindingsIsPushedOnce() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let sender = fastUA()
        try await withSIPServer(
            serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(200)), closing: [sender]
        ) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            for instance in [bobInstance, "\"<urn:uuid:6f2b1c3a-0000-4000-8000-00000000b0b1>\""] {
                let device = fastUA()
                let registered = try await device.register(
                    aor: bobAOR, password: nil, proxy: proxy, expires: 3600,
                    contactURIParameters: pushContactParameters,
                    contactHeaderParameters: [SIPParameter("+sip.instance", instance)])
                #expect(registered.statusCode == 200)
                await device.close()
            }
            // The second binding replaced the first (Flexisip's matchContacts): one binding left.
            #expect(await server.bindingCount(aor: "sip:bob@example.org") == 1)
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "once", callID: "twice-bound-1").statusCode == 202)
            _ = try await push.waitForRecords(1)
            // A second push would leave at once, beside the first.
            try await Task.sleep(for: .milliseconds(500))
            #expect(push.records.count == 1, "\(push.records.map(\.path))")
        }
    }

    @Test("IMDNs (plain and inside CPIM) are held but never pushed")
    func imdnNotPushed() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let sender = fastUA()
        try await withSIPServer(
            serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(200)), closing: [sender]
        ) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(
                    sender, proxy: proxy, body: "<imdn/>", callID: "imdn-1", contentType: "message/imdn+xml"
                ).statusCode == 202)
            let cpim =
                "From: <sip:alice@example.org>\r\nTo: <sip:bob@example.org>\r\nNS: imdn <urn:ietf:params:imdn>\r\n\r\nContent-Type: message/imdn+xml\r\nContent-Disposition: notification\r\n\r\n<imdn/>"
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: cpim, callID: "imdn-2", contentType: "message/cpim")
                    .statusCode == 202)
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "real text", callID: "text-3").statusCode == 202)
            let records = try await push.waitForRecords(1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(push.records.count == 1)
            #expect(records[0].body.contains("\"call-id\":\"text-3\""))
            #expect(await server.undeliveredCallIDs() == ["imdn-1", "imdn-2", "text-3"])
        }
    }

    @Test("Push failures are recorded: APNs 400 with its reason, and an unreachable push URL")
    func pushFailuresRecorded() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir, status: 400)
        defer { push.stop() }
        for (url, expectStatus) in [(push.url, Optional(400)), ("http://127.0.0.1:9", nil)] {
            var config = serverConfiguration([.tcp], push: push, acceptTimeout: .milliseconds(200))
            config.push.apnsDevelopmentURL = url
            config.push.connectTimeout = 2
            let sender = fastUA()
            try await withSIPServer(config, closing: [sender]) { server, addresses in
                let proxy = addresses.proxy(.tcp)
                let device = fastUA()
                #expect(try await registerDevice(device, proxy: proxy).statusCode == 200)
                await device.close()
                try await Task.sleep(for: .milliseconds(100))
                #expect(try await sendFromAlice(sender, proxy: proxy, body: "x", callID: "push-fail").statusCode == 202)
                try await eventually("push outcome", seconds: 15) {
                    await server.eventLog().contains {
                        if case .pushed = $0 { return true }
                        return false
                    }
                }
                let outcome = await server.eventLog().compactMap { event -> (Int?, String)? in
                    if case .pushed(_, "push-fail", _, let status, let reason) = event { return (status, reason) }
                    return nil
                }
                #expect(outcome.count == 1)
                #expect(outcome.first?.0 == expectStatus)
                if expectStatus == 400 {
                    #expect(outcome.first?.1 == "BadDeviceToken")
                } else {
                    #expect(outcome.first?.1.isEmpty == false)
                }
                #expect(await server.undeliveredCallIDs() == ["push-fail"])  // still held
            }
        }
    }

    @Test("The events stream reports registered and held")
    func eventsStream() async throws {
        let agent = fastUA()
        try await withSIPServer(serverConfiguration([.udp], acceptTimeout: .milliseconds(100)), closing: [agent]) {
            server, addresses in
            let proxy = addresses.proxy(.udp)
            let stream = server.events
            let collected = Task { () -> [SIPServerEvent] in
                var seen: [SIPServerEvent] = []
                for await event in stream {
                    seen.append(event)
                    if case .held = event { break }
                }
                return seen
            }
            #expect(try await registerDevice(agent, proxy: proxy).statusCode == 200)
            _ = try await sendFromAlice(agent, proxy: proxy, body: "to myself", callID: "events-1")
            let seen = try await withTimeout(10, "events") { await collected.value }
            #expect(
                seen.contains {
                    if case .registered = $0 { return true }
                    return false
                })
            #expect(
                seen.contains {
                    if case .held(_, "events-1", _, _) = $0 { return true }
                    return false
                })
        }
    }

    @Test(
        "Live flow with push parameters: forwarded at once AND held + pushed; 200 marks it delivered; refresh does not redeliver"
    )
    func liveFlowWithPushParameters() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let push = try await PushReceiver(directory: dir)
        defer { push.stop() }
        let device = fastUA()
        let sender = fastUA()
        try await withSIPServer(
            serverConfiguration([.tcp], push: push, acceptTimeout: .seconds(20)), closing: [device, sender]
        ) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let collector = MessageCollector(device)
            #expect(try await registerDevice(device, proxy: proxy).statusCode == 200)
            #expect(try await sendFromAlice(sender, proxy: proxy, body: "foreground", callID: "fg-1").statusCode == 200)
            _ = try await collector.waitForCount(1)
            _ = try await push.waitForRecords(1)
            let events = await server.eventLog()
            #expect(
                events.contains {
                    if case .held(_, "fg-1", _, _) = $0 { return true }
                    return false
                })
            #expect(
                events.contains {
                    if case .delivered(_, "fg-1", _, _, _) = $0 { return true }
                    return false
                })
            #expect(try await registerDevice(device, proxy: proxy).statusCode == 200)
            try await Task.sleep(for: .milliseconds(400))
            #expect(collector.messages.count == 1)
        }
    }

    @Test("A device answering non-2xx leaves the message held for the next REGISTER")
    func nonSuccessKeepsHeld() async throws {
        let sender = fastUA()
        let refusing = SIPUserAgent(
            configuration: SIPUserAgentConfiguration(
                timers: SIPTimers(t1: .milliseconds(100)),
                autoAnswerStatus: 480), logger: quietLogger)
        let accepting = fastUA()
        try await withSIPServer(
            serverConfiguration([.tcp], acceptTimeout: .milliseconds(200)), closing: [refusing, accepting, sender]
        ) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let device1 = fastUA()
            #expect(try await registerDevice(device1, proxy: proxy).statusCode == 200)
            await device1.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "retry me", callID: "retry-1").statusCode == 202)
            let refused = MessageCollector(refusing)
            #expect(try await registerDevice(refusing, proxy: proxy).statusCode == 200)
            _ = try await refused.waitForCount(1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(await server.undeliveredCallIDs() == ["retry-1"])
            await refusing.close()
            let accepted = MessageCollector(accepting)
            #expect(try await registerDevice(accepting, proxy: proxy).statusCode == 200)
            let received = try await accepted.waitForCount(1)
            #expect(received[0].callID == "retry-1")
            try await eventually("delivered after retry") { await server.undeliveredCallIDs().isEmpty }
        }
    }

    @Test("Over TCP a held message's transaction ends at Timer F: a silent device's next REGISTER gets it again")
    func timerFOverTCPEndsTheTransaction() async throws {
        let sender = fastUA()
        let silent = SIPUserAgent(
            configuration: SIPUserAgentConfiguration(
                timers: SIPTimers(t1: .milliseconds(100)), autoAnswerStatus: nil), logger: quietLogger)
        var configuration = serverConfiguration([.tcp], acceptTimeout: .milliseconds(200))
        configuration.timers = SIPTimers(t1: .milliseconds(10), t2: .milliseconds(40))  // Timer F: 640 ms
        try await withSIPServer(configuration, closing: [silent, sender]) { server, addresses in
            let proxy = addresses.proxy(.tcp)
            let device = fastUA()
            #expect(try await registerDevice(device, proxy: proxy).statusCode == 200)
            await device.close()
            try await Task.sleep(for: .milliseconds(100))
            #expect(
                try await sendFromAlice(sender, proxy: proxy, body: "anyone?", callID: "silent-1").statusCode == 202)
            @Sendable func attempts() async -> [Int] {
                await server.eventLog().compactMap { event in
                    if case .forwarded(_, "silent-1", .tcp, let attempt) = event { return attempt }
                    return nil
                }
            }
            #expect(try await registerDevice(silent, proxy: proxy).statusCode == 200)
            try await eventually("the first copy sent") { await attempts() == [1] }
            // Unanswered and within Timer F: a REGISTER over the same connection does not send it again.
            #expect(try await registerDevice(silent, proxy: proxy).statusCode == 200)
            try await Task.sleep(for: .milliseconds(150))
            #expect(await attempts() == [1])
            // Past Timer F the transaction has timed out: still held, and the next REGISTER sends it again.
            try await Task.sleep(for: .milliseconds(700))
            #expect(await server.undeliveredCallIDs() == ["silent-1"])
            #expect(try await registerDevice(silent, proxy: proxy).statusCode == 200)
            try await eventually("the second copy sent") { await attempts() == [1, 2] }
        }
    }
}
