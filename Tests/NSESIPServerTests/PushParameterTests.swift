import Foundation
import NSEHTTP
import NSEJSON
import NSESIP
import Testing

@testable import NSESIPServer

@Suite("RFC 8599 push parameters and APNs requests")
struct PushParameterTests {
    @Test func combinedTokens() throws {
        let uri = try SIPURI(
            parsing:
                "sip:bob@10.0.0.1:5060;transport=tcp;pn-provider=apns;pn-prid=AAA:voip&BBB:remote;pn-param=TEAM.org.example.app.voip&remote"
        )
        let p = try #require(PushParameters(contactURI: uri))
        #expect(p.provider == "apns")
        #expect(p.teamID == "TEAM")
        #expect(p.bundleID == "org.example.app")
        #expect(p.services == ["voip", "remote"])
        #expect(p.remoteToken == "BBB")
        #expect(p.tokens["voip"] == "AAA")
    }

    @Test func singleTokenAndDefaultService() throws {
        let p = PushParameters(provider: "apns.dev", prid: "TOKEN1", param: "TEAM.org.example.app")
        #expect(p.bundleID == "org.example.app")
        #expect(p.services == ["remote"])
        #expect(p.remoteToken == "TOKEN1")
        let voipOnly = PushParameters(provider: "apns", prid: "T2", param: "TEAM.org.example.app.voip")
        #expect(voipOnly.remoteToken == nil)
        #expect(voipOnly.bundleID == "org.example.app")
        let remote = PushParameters(provider: "APNS", prid: "T3", param: "TEAM.org.example.app.remote")
        #expect(remote.provider == "apns" && remote.remoteToken == "T3" && remote.bundleID == "org.example.app")
    }

    @Test func percentEscapesAreDecodedInEitherCaseAndBadOnesKept() {
        let p = PushParameters(
            provider: "APNS%2Edev", prid: "AAA%3avoip%26BBB%3Aremote", param: "TEAM.org.example.app.voip%26remote",
            messageLocKey: "%zz%4")
        #expect(p.provider == "apns.dev")
        #expect(p.tokens == ["voip": "AAA", "remote": "BBB"])
        #expect(p.services == ["voip", "remote"])
        #expect(p.messageLocKey == "%zz%4")
    }

    @Test func missingParametersGiveNil() throws {
        #expect(PushParameters(contactURI: try SIPURI(parsing: "sip:bob@h;pn-provider=apns;pn-prid=x")) == nil)
    }

    @Test func requestShape() throws {
        let p = PushParameters(
            provider: "apns", prid: "AAA:voip&BBB:remote", param: "TEAM.org.example.app.voip&remote",
            messageLocKey: "MY_KEY", messageSound: "ding.caf")
        let payload = APNsMessagePush.payload(
            callID: "cid", fromURI: "sip:alice@example.org", displayName: "Alice \"A\"",
            privacy: false, instanceID: "<urn:uuid:1>", ttl: 60,
            sendTime: "2026-11-21 10:00:00", locKey: p.messageLocKey!, sound: p.messageSound!)
        let text = String(decoding: payload, as: UTF8.self)
        #expect(
            text
                == "{\"aps\":{\"alert\":{\"loc-key\":\"MY_KEY\",\"loc-args\":[\"Alice \\\"A\\\"\"]},\"sound\":\"ding.caf\",\"mutable-content\":1,\"badge\":1},\"from-uri\":\"sip:alice@example.org\",\"display-name\":\"Alice \\\"A\\\"\",\"call-id\":\"cid\",\"pn_ttl\":60,\"uuid\":\"<urn:uuid:1>\",\"send-time\":\"2026-11-21 10:00:00\",\"chat-room-addr\":\"\",\"customPayload\":{}}"
        )
        let privateText = String(
            decoding: APNsMessagePush.payload(
                callID: "c", fromURI: "sip:a@b", displayName: "A", privacy: true,
                instanceID: "", ttl: 1, sendTime: "t"), as: UTF8.self)
        #expect(privateText.contains("\"loc-args\":[\"\"]"))
        var message = SIPRequest(method: "MESSAGE", uri: try SIPURI(parsing: "sip:bob@example.org"))
        message.headers.add("From", "\"Alice\" <sip:alice@example.org>;tag=1")
        message.headers.add("Call-ID", "cid")
        let record = HeldMessage(
            request: message, id: "1", aor: "sip:bob@example.org", now: 1000, lifetime: 60, order: 1)
        var settings = SIPServerConfiguration.Push(apnsURL: "https://api.push.apple.com/", ttl: 60)
        guard
            case .send(let job) = PushSender(settings: settings).plan(
                record: record, request: message, push: p, instance: nil)
        else {
            Issue.record("no push planned for a binding with a remote token")
            return
        }
        let request = job.request
        #expect(request.url == "https://api.push.apple.com/3/device/BBB")
        #expect(request.method == "POST")
        #expect(request.version == .http2OverTLS)
        #expect(request.headers["apns-topic"] == "org.example.app")
        #expect(request.headers["apns-push-type"] == "alert")
        #expect(request.headers["apns-priority"] == "10")
        #expect(Int64(request.headers["apns-expiration"] ?? "") ?? 0 >= 1060)
        settings.apnsURL = "http://127.0.0.1:9"
        guard
            case .send(let plain) = PushSender(settings: settings).plan(
                record: record, request: message, push: p, instance: nil)
        else {
            Issue.record("no push planned for a binding with a remote token")
            return
        }
        #expect(plain.request.version == .http2PriorKnowledge)
    }

    @Test func callPushesTakeFlexisipsTwoForms() throws {
        var invite = SIPRequest(method: "INVITE", uri: try SIPURI(parsing: "sip:bob@example.org"))
        invite.headers.add("From", "\"Alice\" <sip:alice@example.org>;tag=1")
        invite.headers.add("Call-ID", String(repeating: "c", count: 80))
        let sender = PushSender(settings: SIPServerConfiguration.Push(apnsURL: "https://push.example"))
        let voip = PushParameters(
            provider: "apns", prid: "AAA:voip&BBB:remote", param: "TEAM.org.example.app.voip&remote",
            callLocKey: "MY_CALL")
        // A binding with a voip token: PushKit, expiration 0, the Call-ID inside aps; no notice afterwards.
        guard
            case .send(let kit) = sender.planCall(
                .incoming, aor: "sip:bob@example.org", invite: invite, push: voip, instance: "i")
        else {
            Issue.record("no PushKit push planned")
            return
        }
        #expect(kit.request.url == "https://push.example/3/device/AAA")
        #expect(kit.request.headers["apns-push-type"] == "voip")
        #expect(kit.request.headers["apns-topic"] == "org.example.app.voip")
        #expect(kit.request.headers["apns-expiration"] == "0")
        #expect(kit.request.headers["apns-collapse-id"] == nil)
        let payload = try JSON.parse(kit.request.body)
        #expect(payload["aps"]?["call-id"] == .string(String(repeating: "c", count: 80)))
        #expect(payload["aps"]?["loc-key"] == "MY_CALL")
        #expect(payload["aps"]?["mutable-content"] == nil)
        #expect(payload["display-name"] == "Alice")
        #expect(
            sender.planCall(.missed, aor: "sip:bob@example.org", invite: invite, push: voip, instance: nil).map { _ in
                true
            } == nil)
        // Alerts only: IC_MSG, expiration 0, a collapse id within APNs's 64 bytes; then the missed-call notice.
        let alert = PushParameters(provider: "apns", prid: "BBB", param: "TEAM.org.example.app")
        for (notice, locKey) in [(PushSender.CallNotice.incoming, "IC_MSG"), (.missed, "Missing call")] {
            guard case .send(let job) = sender.planCall(notice, aor: "a", invite: invite, push: alert, instance: nil)
            else {
                Issue.record("no alert planned for \(notice)")
                continue
            }
            #expect(job.request.headers["apns-push-type"] == "alert")
            #expect(job.request.headers["apns-topic"] == "org.example.app")
            #expect(job.request.headers["apns-expiration"] == "0")
            #expect(
                job.request.headers["apns-collapse-id"]
                    == APNsCallPush.collapseID(callID: String(repeating: "c", count: 80)))
            #expect(job.request.headers["apns-collapse-id"]?.utf8.count == 64)
            #expect(try JSON.parse(job.request.body)["aps"]?["alert"]?["loc-key"] == .string(locKey))
        }
        #expect(APNsCallPush.collapseID(callID: "short@host") == "short@host")
    }

    @Test func imdnDetection() {
        #expect(APNsMessagePush.isIMDN(contentType: "message/imdn+xml", body: []))
        let cpim = Array("From: <sip:a@b>\r\n\r\nContent-Type: message/imdn+xml\r\n\r\n<imdn/>".utf8)
        #expect(APNsMessagePush.isIMDN(contentType: "Message/CPIM", body: cpim))
        let text = Array("From: <sip:a@b>\r\n\r\nContent-Type: text/plain\r\n\r\nContent-Type: message/imdn+xml".utf8)
        #expect(!APNsMessagePush.isIMDN(contentType: "message/cpim", body: text))
        #expect(!APNsMessagePush.isIMDN(contentType: "text/plain", body: []))
    }

    @Test func heldMessageHeadersRoundTrip() throws {
        // The database keeps header fields as a JSON array of pairs: any text survives, in order.
        let message = HeldMessage(
            id: "0123abcd", aor: "sip:bob@example.org", callID: "cid@alice",
            headers: [("From", "<sip:alice@example.org>;tag=1"), ("X-Note", "é\"\\ ok"), ("X-Note", "2")],
            body: [], receivedAt: 1_795_000_000, expiresAt: 1_795_604_800, order: 1)
        let decoded = try #require(HeldMessage.headers(fromJSON: message.headersJSON))
        #expect(decoded.map(\.0) == ["From", "X-Note", "X-Note"])
        #expect(decoded.map(\.1) == ["<sip:alice@example.org>;tag=1", "é\"\\ ok", "2"])
        #expect(HeldMessage.headers(fromJSON: "[[\"From\"]]") == nil)
        #expect(HeldMessage.headers(fromJSON: "not json") == nil)
    }

    @Test func legacyHeldMessageFile() throws {
        // The file format of nse before its database, read once to import it.
        let bytes = Array(
            #"{"version":1,"id":"0123abcd","aor":"sip:bob@example.org","call-id":"cid@alice","headers":[["From","<sip:alice@example.org>;tag=1"]],"body":"AAEC/w==","received-at":1795000000,"expires-at":1795604800,"delivered":true,"delivered-at":1795000005,"attempts":2,"order":1795000000123456789}"#
                .utf8)
        let decoded = try #require(HeldMessage(legacyFile: bytes))
        #expect(decoded.id == "0123abcd" && decoded.aor == "sip:bob@example.org" && decoded.callID == "cid@alice")
        #expect(decoded.headers.map(\.0) == ["From"] && decoded.headers.map(\.1) == ["<sip:alice@example.org>;tag=1"])
        #expect(decoded.body == [0x00, 0x01, 0x02, 0xFF])
        #expect(decoded.receivedAt == 1_795_000_000 && decoded.expiresAt == 1_795_604_800)
        #expect(
            decoded.delivery == .delivered(at: 1_795_000_005) && decoded.attempts == 2
                && decoded.order == 1_795_000_000_123_456_789)
        // A record written before `attempts`/`order` existed, with `delivered-at` null.
        let old = Array(
            #"{"version":1,"id":"x","aor":"sip:a@b","call-id":"c","headers":[],"body":"aGVsbG8=","received-at":5,"expires-at":9,"delivered":false,"delivered-at":null}"#
                .utf8)
        let legacy = try #require(HeldMessage(legacyFile: old))
        #expect(
            legacy.body == Array("hello".utf8) && legacy.delivery == .pending && legacy.attempts == 0
                && legacy.order == 5_000_000_000)
        #expect(HeldMessage(legacyFile: Array("not json".utf8)) == nil)
        #expect(HeldMessage(legacyFile: Array(#"{"id":"x"}"#.utf8)) == nil)
    }

    @Test func usersFile() {
        let users = SIPServerConfiguration.parseUsers("# c\nbob pw1\n\n\tcarol   pw2\nbroken\n")
        #expect(users == ["bob": "pw1", "carol": "pw2"])
    }

    @Test func pushSendTimeIsFlexisipUTC() {
        // `send-time` comes from NSESystem's `SystemClock.flexisipTime` (tested in NSETests); the payload carries it verbatim.
        let text = String(
            decoding: APNsMessagePush.payload(
                callID: "c", fromURI: "sip:a@b", displayName: "A", privacy: false,
                instanceID: "", ttl: 1, sendTime: "1970-01-01 00:00:00"), as: UTF8.self)
        #expect(text.contains("\"send-time\":\"1970-01-01 00:00:00\""))
    }
}
