import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOEmbedded
import NSEAPNs
import NSEAPNsServer
import NSEDevice
import NSEHost
import NSEJSON
import NSETestSupport
import Testing

/// An APNs key as Apple hands it out (an EC P-256 key in PKCS #8 PEM, made in process by swift-crypto), and its signer.
struct TestAPNsKey {
    static let keyID = "ABC123DEFG"
    static let teamID = "ABCDE12345"
    let path: String

    init(in directory: String, name: String = "AuthKey_ABC123DEFG.p8") throws {
        path = directory + "/" + name
        try TestSupport.write(P256.Signing.PrivateKey().pemRepresentation + "\n", to: path)
    }

    func token(issuedAt: Int64 = Int64(Date().timeIntervalSince1970), keyID: String = keyID, teamID: String = teamID)
        async throws -> String
    {
        try await ProviderTokenSigner(keyFile: path, keyID: keyID, teamID: teamID).token(issuedAt: issuedAt)
    }

    /// A token whose claims are `claims` as written (a JSON object's text), signed ES256 with this key by hand, as a
    /// client library that builds its own JWT does (e.g. `iat` as `time.time()`, a float).
    func token(rawClaims claims: String, keyID: String = keyID, derSignature: Bool = false) throws -> String {
        func base64URL(_ bytes: some Sequence<UInt8>) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
        let signed =
            base64URL(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8)) + "." + base64URL(Array(claims.utf8))
        let signature = try key.signature(for: Data(signed.utf8))
        return signed + "." + base64URL(derSignature ? signature.derRepresentation : signature.rawRepresentation)
    }
}

/// A device and a service that requires provider tokens signed by `key`.
struct AuthFixture {
    let device: Device
    let key: TestAPNsKey
    let service: PushService
    let root: String

    init(deviceTeam: String = TestAPNsKey.teamID) async throws {
        root = try TestSupport.temporaryDirectory("nse-serve-auth")
        var options = Device.Options()
        options.teamID = deviceTeam
        device = try Device.create(at: root + "/bob", options: options)
        key = try TestAPNsKey(in: root)
        let verifier = try await ProviderTokenVerifier(
            keyFile: key.path, keyID: TestAPNsKey.keyID, teamID: TestAPNsKey.teamID)
        service = PushService(
            devices: [device], concurrency: 2, queueCapacity: 16, extensionCommand: [TestSupport.referenceExtension],
            authentication: ProviderAuthentication(verifier: verifier), logger: Logger(label: "test"))
    }

    /// One push through the router with `authorization` as given; status, reason, apns-id and apns-unique-id.
    func send(authorization: String?, token: String? = nil) async throws -> (
        status: Int, reason: String?, apnsID: String?, uniqueID: String?
    ) {
        var headers = [("apns-topic", "org.example.app"), ("apns-push-type", "alert")]
        if let authorization { headers.append(("authorization", authorization)) }
        let requestHeaders = fields(headers)
        let app = Application(responder: PushResponder(service: service))
        return try await app.test(.router) { client in
            try await client.execute(
                uri: "/3/device/\(token ?? device.config.remoteToken)", method: .post, headers: requestHeaders,
                body: ByteBuffer(string: alertPayload)
            ) { response in
                (
                    Int(response.status.code), reason(response), response.headers[.init("apns-id")!],
                    response.headers[.init("apns-unique-id")!]
                )
            }
        }
    }

    func settle() async throws {
        for _ in 0..<1000 where service.queue.pending > 0 { try await Task.sleep(nanoseconds: 10_000_000) }
    }
}

@Suite struct ProviderAuthTests {
    var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test func aValidTokenIsAcceptedWithAUniqueID() async throws {
        let fixture = try await AuthFixture()
        let answer = try await fixture.send(authorization: "bearer " + (try await fixture.key.token()))
        #expect(answer.status == 200, "\(answer.reason ?? "")")
        #expect(answer.uniqueID.map(APNsValidation.isUUID) == true)
        #expect(answer.uniqueID != answer.apnsID)
        try await fixture.settle()
        #expect(try fixture.service.store.results(for: fixture.device, limit: 5).count == 1)
    }

    @Test func missingTokens() async throws {
        let fixture = try await AuthFixture()
        for authorization in [nil, "", "bearer", "bearer   ", "basic dXNlcjpwYXNz"] {
            let answer = try await fixture.send(authorization: authorization)
            #expect(answer.status == 403 && answer.reason == "MissingProviderToken", "\(authorization ?? "nil")")
        }
        try await fixture.settle()
        #expect(try fixture.service.store.results(for: fixture.device, limit: 5).isEmpty)
    }

    @Test func invalidTokens() async throws {
        let fixture = try await AuthFixture()
        let good = try await fixture.key.token()
        let otherKey = try TestAPNsKey(in: fixture.root, name: "other.p8")
        let segments = good.split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            ("not a jwt", "garbage"),
            ("signed by another key", try await otherKey.token()),
            ("another key id", try await fixture.key.token(keyID: "ZZZ999ZZZZ")),
            ("another team", try await fixture.key.token(teamID: "OTHERTEAM1")),
            ("issued in the future", try await fixture.key.token(issuedAt: now + 3600)),
            ("signature cut", segments[0] + "." + segments[1] + "." + String(segments[2].dropLast(4))),
            (
                "claims swapped",
                segments[0] + "." + (try await fixture.key.token(issuedAt: now - 5)).split(separator: ".")[1] + "."
                    + segments[2]
            ),
            ("alg none", "eyJhbGciOiJub25lIiwia2lkIjoiQUJDMTIzREVGRyJ9." + segments[1] + "."),
        ]
        for (name, token) in cases {
            let answer = try await fixture.send(authorization: "bearer " + token)
            #expect(
                answer.status == 403 && answer.reason == "InvalidProviderToken",
                "\(name): \(answer.status) \(answer.reason ?? "")")
        }
    }

    @Test func tokensOlderThanAnHourAreExpired() async throws {
        let fixture = try await AuthFixture()
        let stale = try await fixture.key.token(issuedAt: now - 3601)
        let answer = try await fixture.send(authorization: "bearer " + stale)
        #expect(answer.status == 403 && answer.reason == "ExpiredProviderToken")
        let fresh = try await fixture.send(
            authorization: "Bearer " + (try await fixture.key.token(issuedAt: now - 3500)))
        #expect(fresh.status == 200)
        try await fixture.settle()
    }

    /// RFC 7519's NumericDate may have a fraction: Python clients sign `time.time()`. Compared as a number, the hour
    /// and the future skew still apply; a number written in a string is taken as APNs takes it (docs/serve.md).
    @Test func anIssueTimeWithAFractionIsANumericDate() async throws {
        let fixture = try await AuthFixture()
        let now = Date().timeIntervalSince1970
        let team = TestAPNsKey.teamID
        let cases: [(String, String)] = [
            (#"{"iss":"\#(team)","iat":\#(now - 5.25)}"#, "200"),
            (#"{"iss":"\#(team)","iat":\#(now - 3599.5)}"#, "200"),
            (#"{"iss":"\#(team)","iat":\#(now - 3600.75 - 2)}"#, "403 ExpiredProviderToken"),
            (#"{"iss":"\#(team)","iat":\#(now + 3600.5)}"#, "403 InvalidProviderToken"),
            (#"{"iss":"\#(team)","iat":1.7e9}"#, "403 ExpiredProviderToken"),
            // A number written as a string, as APNSwift 5–6 and kalyke-apns send it: APNs accepts it.
            (#"{"iss":"\#(team)","iat":"\#(Int(now))"}"#, "200"),
            (#"{"iss":"\#(team)","iat":"\#(Int(now) - 3700)"}"#, "403 ExpiredProviderToken"),
            (#"{"iss":"\#(team)","iat":"\#(Int(now)).5"}"#, "200"),
            (#"{"iss":"\#(team)","iat":"1e9"}"#, "403 InvalidProviderToken"),
            (#"{"iss":"\#(team)","iat":" \#(Int(now))"}"#, "403 InvalidProviderToken"),
            (#"{"iss":"\#(team)","iat":"inf"}"#, "403 InvalidProviderToken"),
            (#"{"iss":"\#(team)","iat":""}"#, "403 InvalidProviderToken"),
            (#"{"iss":"\#(team)","iat":null}"#, "403 InvalidProviderToken"),
        ]
        // A DER signature (apnotic signs so), which APNs takes as well; a DER signature of other claims does not pass.
        let der = try fixture.key.token(rawClaims: #"{"iss":"\#(team)","iat":\#(Int(now))}"#, derSignature: true)
        #expect(try await fixture.send(authorization: "bearer " + der).status == 200)
        let other = try fixture.key.token(rawClaims: #"{"iss":"\#(team)","iat":\#(Int(now) - 1)}"#, derSignature: true)
        let swapped =
            der.split(separator: ".")[0] + "." + der.split(separator: ".")[1] + "." + other.split(separator: ".")[2]
        #expect(try await fixture.send(authorization: "bearer " + swapped).reason == "InvalidProviderToken")
        for (claims, expected) in cases {
            let answer = try await fixture.send(authorization: "bearer " + (try fixture.key.token(rawClaims: claims)))
            let got = answer.status == 200 ? "200" : "\(answer.status) \(answer.reason ?? "")"
            #expect(got == expected, "\(claims)")
        }
        try await fixture.settle()
    }

    /// Behind an HTTP/2 proxy several providers share one connection: the 20-minute rule is each provider's (its key
    /// and team, and the client a proxy names), not the connection's.
    @Test func providersSharingAConnectionAreToldApart() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-auth-shared")
        let first = try TestAPNsKey(in: root, name: "first.p8")
        let second = try TestAPNsKey(in: root, name: "second.p8")
        let authentication = ProviderAuthentication(verifiers: [
            try await ProviderTokenVerifier(keyFile: first.path, keyID: "FIRSTKEY01", teamID: "TEAMONE001"),
            try await ProviderTokenVerifier(keyFile: second.path, keyID: "SECONDKEY2", teamID: "TEAMTWO002"),
        ])
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let connection = ConnectionIdentity(channel: channel)
        func check(_ token: String, client: String? = nil) async -> String {
            switch await authentication.authenticate(
                authorization: "bearer " + token, connection: connection, forwardedClient: client)
            {
            case .success(let claims): return "ok \(claims.teamID)"
            case .failure(let error): return "\(error.status) \(error.reason)"
            }
        }
        let one = try await first.token(issuedAt: now - 60, keyID: "FIRSTKEY01", teamID: "TEAMONE001")
        let two = try await second.token(issuedAt: now - 30, keyID: "SECONDKEY2", teamID: "TEAMTWO002")
        for _ in 0..<3 {
            #expect(await check(one) == "ok TEAMONE001")
            #expect(await check(two) == "ok TEAMTWO002")
        }
        // One key, two processes a proxy names apart.
        let early = try await first.token(issuedAt: now - 50, keyID: "FIRSTKEY01", teamID: "TEAMONE001")
        let late = try await first.token(issuedAt: now - 40, keyID: "FIRSTKEY01", teamID: "TEAMONE001")
        for _ in 0..<2 {
            #expect(await check(early, client: "127.0.0.1:40001") == "ok TEAMONE001")
            #expect(await check(late, client: "127.0.0.1:40002") == "ok TEAMONE001")
        }
        // One of them changing its token within 20 minutes is still too many updates.
        #expect(await check(late, client: "127.0.0.1:40001") == "429 TooManyProviderTokenUpdates")
        // An unknown key id.
        #expect(
            await check(try await first.token(keyID: "NOSUCHKEY0", teamID: "TEAMONE001")) == "403 InvalidProviderToken")
        #expect(
            ProviderAuthentication.forwardedClient(in: [("forwarded", #"for="[::1]:4711";proto=https, for=x"#)])
                == "[::1]:4711")
        #expect(
            ProviderAuthentication.forwardedClient(in: [
                ("x-forwarded-for", "127.0.0.1, 10.0.0.1"), ("x-forwarded-port", "40003"),
            ]) == "127.0.0.1:40003")
        #expect(ProviderAuthentication.forwardedClient(in: [("x-other", "1")]) == nil)
    }

    /// A long-lived proxy connection forwarding ever new clients: providers whose token is past its hour are
    /// forgotten, so the table follows the last hour's clients, not every client since the connection opened.
    @Test func providersPastTheirTokensHourAreForgotten() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-auth-sweep")
        let key = try TestAPNsKey(in: root, name: "key.p8")
        let authentication = ProviderAuthentication(verifiers: [
            try await ProviderTokenVerifier(keyFile: key.path, keyID: "SWEEPKEY01", teamID: "TEAMSWEEP1")
        ])
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let connection = ConnectionIdentity(channel: channel)
        let start = now
        let first = try await key.token(issuedAt: start - 10, keyID: "SWEEPKEY01", teamID: "TEAMSWEEP1")
        for port in 0..<1000 {
            let answer = await authentication.authenticate(
                authorization: "bearer " + first, connection: connection, forwardedClient: "10.0.0.1:\(port)",
                now: start)
            guard case .success = answer else {
                Issue.record("client \(port): \(answer)")
                return
            }
        }
        #expect(authentication.providerCount == 1000)
        let later = start + Int64(ProviderToken.lifetimeSeconds) + 100
        let second = try await key.token(issuedAt: later - 10, keyID: "SWEEPKEY01", teamID: "TEAMSWEEP1")
        for port in 1000..<1100 {
            let answer = await authentication.authenticate(
                authorization: "bearer " + second, connection: connection, forwardedClient: "10.0.0.1:\(port)",
                now: later)
            guard case .success = answer else {
                Issue.record("client \(port): \(answer)")
                return
            }
        }
        #expect(authentication.providerCount == 100)
        // A forgotten provider coming back with its next token is welcome, as its renewal would have been.
        let back = await authentication.authenticate(
            authorization: "bearer " + second, connection: connection, forwardedClient: "10.0.0.1:7", now: later)
        guard case .success = back else {
            Issue.record("a returning provider: \(back)")
            return
        }
    }

    @Test func anotherTeamsAppIsTopicDisallowed() async throws {
        let fixture = try await AuthFixture(deviceTeam: "OTHERTEAM1")
        let answer = try await fixture.send(authorization: "bearer " + (try await fixture.key.token()))
        #expect(answer.status == 400 && answer.reason == "TopicDisallowed")
    }

    @Test func renewingSoonerThanTwentyMinutesOnAConnectionIsTooManyUpdates() async throws {
        let fixture = try await AuthFixture()
        let authentication = try #require(fixture.service.authentication)
        let channels = [EmbeddedChannel(), EmbeddedChannel()]
        // Closed at the end: an open EmbeddedChannel and the close callbacks registered on it stay in a cycle.
        defer { for channel in channels { _ = try? channel.finish() } }
        let connection = ConnectionIdentity(channel: channels[0])
        let other = ConnectionIdentity(channel: channels[1])
        let first = try await fixture.key.token(issuedAt: now - 1300)
        let soon = try await fixture.key.token(issuedAt: now - 1200)
        let later = try await fixture.key.token(issuedAt: now - 10)
        func check(_ token: String, _ connection: ConnectionIdentity) async -> String {
            switch await authentication.authenticate(authorization: "bearer " + token, connection: connection) {
            case .success: return "ok"
            case .failure(let error): return "\(error.status) \(error.reason)"
            }
        }
        #expect(await check(first, connection) == "ok")
        #expect(await check(first, connection) == "ok", "the same token again is no renewal")
        #expect(await check(soon, connection) == "429 TooManyProviderTokenUpdates")
        #expect(await check(soon, other) == "ok", "another connection has its own token")
        #expect(await check(later, connection) == "ok", "20 minutes after the first")
        #expect(await check(soon, connection) == "429 TooManyProviderTokenUpdates", "going back is a renewal too")
    }

    @Test func aClosedConnectionIsForgotten() async throws {
        let fixture = try await AuthFixture()
        let authentication = try #require(fixture.service.authentication)
        let channel = EmbeddedChannel()
        let before = authentication.connectionCount
        _ = await authentication.authenticate(
            authorization: "bearer " + (try await fixture.key.token()), connection: ConnectionIdentity(channel: channel)
        )
        #expect(authentication.connectionCount == before + 1)
        _ = try? channel.finish()
        #expect(authentication.connectionCount == before)
    }

    @Test func verifierRefusesFilesThatAreNotKeys() async throws {
        let root = try TestSupport.temporaryDirectory("nse-serve-auth")
        try TestSupport.write("hello", to: root + "/text.p8")
        try TestSupport.write("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", to: root + "/bad.p8")
        for (file, expected) in [
            ("missing.p8", "No such file"), ("text.p8", "not a PEM file"), ("bad.p8", "not an EC P-256"),
        ] {
            do {
                _ = try await ProviderTokenVerifier(keyFile: root + "/" + file, keyID: "K", teamID: "T")
                Issue.record("\(file) was accepted")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
                #expect(!error.description.contains("\n"))
            }
        }
    }
}
