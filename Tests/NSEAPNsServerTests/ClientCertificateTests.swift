import Foundation
import NSEDevice
import NSEJSON
import NSETestSupport
import Testing

/// Certificate-based provider authentication (`nse serve --client-ca`), as Flexisip pushes: client certificates
/// made here with openssl the way Apple issues them (the bundle id in the subject's UID, the environment in the
/// common name), presented by curl; token authentication on the same server for clients without one.
@Suite(.serialized) struct ClientCertificateTests {
    let root: String
    let token: String
    let serverCertificate: String
    let serverKey: String
    let key: TestAPNsKey

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-client-ca")
        #expect(try TestSupport.nse(["device", "init", root + "/bob", "--bundle-id", "org.example.app"]).status == 0)
        token = try Device.open(at: root + "/bob").config.remoteToken
        let files = try TestSupport.selfSignedCertificate(in: root)
        (serverCertificate, serverKey) = (files.certificate, files.key)
        key = try TestAPNsKey(in: root)
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            root + "/ca.key", "-out", root + "/ca.pem", "-subj", "/CN=Test Push CA", "-days", "2",
        ])
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            root + "/other-ca.key", "-out", root + "/other-ca.pem", "-subj", "/CN=Another CA", "-days", "2",
        ])
    }

    func openssl(_ arguments: [String]) throws {
        let done = try TestSupport.run("/usr/bin/openssl", arguments)
        if done.status != 0 { throw LiveTestError(description: "openssl \(arguments.first ?? ""): \(done.stderr)") }
    }

    /// A client key and certificate with `subject`, signed by `ca` (ca or other-ca); the two paths.
    func client(_ name: String, subject: String, ca: String = "ca") throws -> (certificate: String, key: String) {
        let base = root + "/" + name
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", base + ".key",
            "-out", base + ".csr", "-subj", subject,
        ])
        try openssl([
            "x509", "-req", "-in", base + ".csr", "-CA", root + "/\(ca).pem", "-CAkey", root + "/\(ca).key",
            "-CAcreateserial", "-out", base + ".pem", "-days", "2",
        ])
        return (base + ".pem", base + ".key")
    }

    /// One push with curl over h2, presenting `client` if given; the status and the reason (status "000": the TLS
    /// handshake failed).
    func push(_ server: ServeProcess, client: (certificate: String, key: String)?, topic: String? = nil) async throws
        -> (status: String, reason: String?)
    {
        let body = root + "/answer-\(UUID().uuidString)"
        var arguments = [
            "-sS", "-o", body, "-w", "%{http_code}", "--http2", "--max-time", "20", "--cacert", serverCertificate,
            "--data-binary", #"{"aps":{"alert":"hello"}}"#,
        ]
        if let client { arguments += ["--cert", client.certificate, "--key", client.key] }
        if let topic { arguments += ["-H", "apns-topic: \(topic)"] }
        let done = try await runOffPool("/usr/bin/curl", arguments + [server.url + "/3/device/" + token], timeout: 30)
        let answer = (try? String(contentsOfFile: body, encoding: .utf8)).flatMap { try? JSON.parse($0) }
        return (done.stdout, answer?["reason"]?.stringValue)
    }

    @Test func certificatesNameTheAppAndTheEnvironmentAndTokensStillWork() async throws {
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--tls-cert", serverCertificate, "--tls-key", serverKey, "--client-ca",
            root + "/ca.pem", "--device", root + "/bob", "--auth-key-file", key.path, "--key-id", TestAPNsKey.keyID,
            "--team-id", TestAPNsKey.teamID,
        ])
        defer { server.stop() }
        let development = try client(
            "dev", subject: "/UID=org.example.app/CN=Apple Development IOS Push Services: org.example.app/O=Example")
        // No apns-topic: the certificate's app is the topic, as on APNs.
        #expect(try await push(server, client: development) == ("200", nil))
        #expect(try await push(server, client: development, topic: "org.example.app") == ("200", nil))
        let universal = try client("universal", subject: "/UID=org.example.app/CN=Apple Push Services: org.example.app")
        #expect(try await push(server, client: universal) == ("200", nil))
        let otherApp = try client("other", subject: "/UID=org.other.app/CN=Apple Push Services: org.other.app")
        #expect(try await push(server, client: otherApp, topic: "org.example.app") == ("400", "TopicDisallowed"))
        let production = try client(
            "prod", subject: "/UID=org.example.app/CN=Apple Production IOS Push Services: org.example.app")
        #expect(try await push(server, client: production) == ("403", "BadCertificateEnvironment"))
        let anonymous = try client("anonymous", subject: "/CN=just a client")
        #expect(try await push(server, client: anonymous, topic: "org.example.app") == ("403", "BadCertificate"))
        // A certificate the CA did not sign ends the handshake.
        let stranger = try client(
            "stranger", subject: "/UID=org.example.app/CN=Apple Push Services: org.example.app", ca: "other-ca")
        #expect(try await push(server, client: stranger).status == "000")
        // No certificate: the connection uses a provider token, or has none.
        #expect(try await push(server, client: nil, topic: "org.example.app") == ("403", "MissingProviderToken"))
        let payload = root + "/alert.json"
        try TestSupport.write(#"{"aps":{"alert":"signed"}}"#, to: payload)
        let signed = try await runOffPool(
            TestSupport.nse,
            [
                "push", "--url", server.url, "--cacert", serverCertificate, "--device", root + "/bob",
                "--auth-key-file", key.path, "--key-id", TestAPNsKey.keyID, "--team-id", TestAPNsKey.teamID, payload,
            ], timeout: 60)
        #expect(signed.status == 0, "\(signed.stdout) \(signed.stderr)")
        let log = try await runOffPool(
            "/usr/bin/curl", ["-sS", "--cacert", serverCertificate, server.url + "/v1/requests"], timeout: 20)
        let kinds =
            (try? JSON.parse(log.stdout, options: JSONParseOptions(requireObject: false)))?.arrayValue?
            .compactMap { $0["auth"]?.stringValue } ?? []
        #expect(kinds.filter { $0 == "certificate" }.count == 6)
        #expect(kinds.first == "token")
        #expect(server.stop() == 0)
        #expect(try recordedResults(root + "/bob").count == 4)
    }

    @Test func aProductionServerRefusesADevelopmentCertificateAndBadOptionsAreNamed() async throws {
        let server = try ServeProcess([
            "--listen", "127.0.0.1:0", "--tls-cert", serverCertificate, "--tls-key", serverKey, "--client-ca",
            root + "/ca.pem", "--apns-environment", "production", "--device", root + "/bob",
        ])
        defer { server.stop() }
        let development = try client(
            "dev2", subject: "/UID=org.example.app/CN=Apple Development IOS Push Services: org.example.app")
        #expect(try await push(server, client: development) == ("403", "BadCertificateEnvironment"))
        let production = try client(
            "prod2", subject: "/UID=org.example.app/CN=Apple Production IOS Push Services: org.example.app")
        #expect(try await push(server, client: production) == ("200", nil))
        // Certificates required, no token key: a client without one is refused.
        #expect(try await push(server, client: nil, topic: "org.example.app") == ("403", "MissingProviderToken"))
        #expect(server.stop() == 0)

        let noTLS = try TestSupport.nse(["serve", "--device", root + "/bob", "--client-ca", root + "/ca.pem"])
        #expect(noTLS.status == 64 && noTLS.stderr.contains("--client-ca needs --tls-cert"))
        let badEnvironment = try TestSupport.nse(["serve", "--device", root + "/bob", "--apns-environment", "staging"])
        #expect(badEnvironment.status == 64 && badEnvironment.stderr.contains("--apns-environment staging"))
        try TestSupport.write("not a certificate\n", to: root + "/empty.pem")
        let empty = try TestSupport.nse([
            "serve", "--listen", "127.0.0.1:0", "--device", root + "/bob", "--tls-cert", serverCertificate,
            "--tls-key", serverKey, "--client-ca", root + "/empty.pem",
        ])
        #expect(empty.status != 0 && empty.stderr.contains("empty.pem"), "\(empty.stderr)")
    }
}
