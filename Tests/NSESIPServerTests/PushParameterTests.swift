import Foundation
import NSESIP
import NSEHTTP
@testable import NSESIPServer
import Testing

@Suite("RFC 8599 push parameters and APNs requests")
struct PushParameterTests {
    @Test func combinedTokens() throws {
        let uri = try SIPURI(parsing: "sip:bob@10.0.0.1:5060;transport=tcp;pn-provider=apns;pn-prid=AAA:voip&BBB:remote;pn-param=TEAM.org.example.app.voip&remote")
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

    @Test func missingParametersGiveNil() throws {
        #expect(PushParameters(contactURI: try SIPURI(parsing: "sip:bob@h;pn-provider=apns;pn-prid=x")) == nil)
    }

    @Test func requestShape() throws {
        let p = PushParameters(provider: "apns", prid: "AAA:voip&BBB:remote", param: "TEAM.org.example.app.voip&remote",
                               messageLocKey: "MY_KEY", messageSound: "ding.caf")
        let payload = APNsMessagePush.payload(callID: "cid", fromURI: "sip:alice@example.org", displayName: "Alice \"A\"",
                                              privacy: false, instanceID: "<urn:uuid:1>", ttl: 60,
                                              sendTime: "2026-11-21 10:00:00", locKey: p.messageLocKey!, sound: p.messageSound!)
        let text = String(decoding: payload, as: UTF8.self)
        #expect(text == "{\"aps\":{\"alert\":{\"loc-key\":\"MY_KEY\",\"loc-args\":[\"Alice \\\"A\\\"\"]},\"sound\":\"ding.caf\",\"mutable-content\":1,\"badge\":1},\"from-uri\":\"sip:alice@example.org\",\"display-name\":\"Alice \\\"A\\\"\",\"call-id\":\"cid\",\"pn_ttl\":60,\"uuid\":\"<urn:uuid:1>\",\"send-time\":\"2026-11-21 10:00:00\",\"chat-room-addr\":\"\",\"customPayload\":{}}")
        let privateText = String(decoding: APNsMessagePush.payload(callID: "c", fromURI: "sip:a@b", displayName: "A", privacy: true,
                                                                   instanceID: "", ttl: 1, sendTime: "t"), as: UTF8.self)
        #expect(privateText.contains("\"loc-args\":[\"\"]"))
        let request = try #require(APNsMessagePush.request(baseURL: "https://api.push.apple.com/", push: p, payload: payload,
                                                           ttl: 60, now: 1000, settings: SIPServerConfiguration.Push()))
        #expect(request.url == "https://api.push.apple.com/3/device/BBB")
        #expect(request.method == "POST")
        #expect(request.version == .http2OverTLS)
        #expect(request.headers["apns-topic"] == "org.example.app")
        #expect(request.headers["apns-push-type"] == "alert")
        #expect(request.headers["apns-priority"] == "10")
        #expect(request.headers["apns-expiration"] == "1060")
        let plain = try #require(APNsMessagePush.request(baseURL: "http://127.0.0.1:9", push: p, payload: payload, ttl: 60, now: 0,
                                                         settings: SIPServerConfiguration.Push()))
        #expect(plain.version == .http2PriorKnowledge)
    }

    @Test func imdnDetection() {
        #expect(APNsMessagePush.isIMDN(contentType: "message/imdn+xml", body: []))
        let cpim = Array("From: <sip:a@b>\r\n\r\nContent-Type: message/imdn+xml\r\n\r\n<imdn/>".utf8)
        #expect(APNsMessagePush.isIMDN(contentType: "Message/CPIM", body: cpim))
        let text = Array("From: <sip:a@b>\r\n\r\nContent-Type: text/plain\r\n\r\nContent-Type: message/imdn+xml".utf8)
        #expect(!APNsMessagePush.isIMDN(contentType: "message/cpim", body: text))
        #expect(!APNsMessagePush.isIMDN(contentType: "text/plain", body: []))
    }

    @Test func jsonAndBase64RoundTrip() throws {
        let value = JSONValue.object([("a", .string("é\"\\\n\u{01}")), ("b", .array([.int(-3), .double(1.5), .bool(true), .null]))])
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(try JSONValue.parse(Array("{\"s\":\"\\ud83d\\ude00\"}".utf8))["s"]?.stringValue == "😀")
        for n in 0..<20 {
            let bytes = (0..<n).map { UInt8(($0 * 37 + n) & 0xFF) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("hello".utf8)) == "aGVsbG8=")
    }

    @Test func usersFile() {
        let users = SIPServerConfiguration.parseUsers("# c\nbob pw1\n\n\tcarol   pw2\nbroken\n")
        #expect(users == ["bob": "pw1", "carol": "pw2"])
    }

    @Test func utcFormat() {
        #expect(WallClock.utcString(0) == "1970-01-01 00:00:00")
        #expect(WallClock.utcString(1_795_000_000) == "2026-11-18 11:06:40")
    }
}
