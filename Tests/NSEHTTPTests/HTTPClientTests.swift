import Foundation
import NSEHTTP
import NSETestSupport
import Testing

private func echo(_ response: HTTPResponse) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(response.body))
    guard let dictionary = object as? [String: Any] else { throw TestFailure("echo reply is not a JSON object") }
    return dictionary
}

private func echoedHeaders(_ json: [String: Any]) -> [(String, String)] {
    (json["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) }
}

/// Calls the blocking overload (async contexts would otherwise pick the async one).
private func sendBlocking(_ client: HTTPClient, _ request: HTTPRequest) throws -> HTTPResponse {
    try client.send(request)
}

/// Runs `body` expecting an HTTPClientError and returns it.
private func expectError(_ body: () async throws -> HTTPResponse) async -> HTTPClientError? {
    do {
        let response = try await body()
        Issue.record("expected an error, got status \(response.status)")
        return nil
    } catch let error as HTTPClientError {
        return error
    } catch {
        Issue.record("expected HTTPClientError, got \(error)")
        return nil
    }
}

@Suite("HTTP/1.1 against a local Python server")
struct HTTP1Tests {
    let client = HTTPClient()

    @Test func getRoundTrip() async throws {
        try await TestServers.withEchoServer { base in
            let response = try sendBlocking(client, HTTPRequest.get(url: base + "/hello?x=1"))
            #expect(response.status == 200)
            #expect(response.httpVersion == "1.1")
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.totalTimeMilliseconds > 0)
            let json = try echo(response)
            #expect(json["method"] as? String == "GET")
            #expect(json["path"] as? String == "/hello?x=1")
            #expect(json["body"] as? String == "")
        }
    }

    @Test func postJSONRoundTripAsync() async throws {
        try await TestServers.withEchoServer { base in
            let payload = Array(#"{"aps":{"alert":"hi \u00e9"}}"#.utf8)
            let response = try await client.send(
                HTTPRequest.post(url: base + "/push", json: payload, headers: ["X-Id": "7"]))
            #expect(response.status == 200)
            let json = try echo(response)
            #expect(json["method"] as? String == "POST")
            #expect(json["body"] as? String == String(decoding: payload, as: UTF8.self))
            let headers = echoedHeaders(json)
            #expect(headers.contains { $0.0.lowercased() == "content-type" && $0.1 == "application/json" })
            #expect(headers.contains { $0.0.lowercased() == "content-length" && $0.1 == String(payload.count) })
            #expect(!headers.contains { $0.0.lowercased() == "expect" })
        }
    }

    @Test func otherMethodsAndEmptyBodies() async throws {
        try await TestServers.withEchoServer { base in
            let put = try await client.send(HTTPRequest(method: "PUT", url: base + "/r", body: Array("abc".utf8)))
            #expect(try echo(put)["method"] as? String == "PUT")
            #expect(try echo(put)["body"] as? String == "abc")
            let delete = try await client.send(HTTPRequest(method: "DELETE", url: base + "/r"))
            #expect(try echo(delete)["method"] as? String == "DELETE")
            let emptyPost = try await client.send(HTTPRequest(method: "POST", url: base + "/r"))
            let headers = echoedHeaders(try echo(emptyPost))
            #expect(headers.contains { $0.0.lowercased() == "content-length" && $0.1 == "0" })
            #expect(!headers.contains { $0.0.lowercased() == "content-type" })
            let head = try await client.send(HTTPRequest(method: "HEAD", url: base + "/r"))
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
        }
    }

    @Test func requestHeadersArriveInOrder() async throws {
        try await TestServers.withEchoServer { base in
            let headers: HTTPHeaders = ["X-C": "3", "X-A": "1", "X-B": "2", "X-A": "again", "X-Empty": ""]
            let json = try echo(try await client.send(HTTPRequest.get(url: base + "/h", headers: headers)))
            let custom = echoedHeaders(json).filter { $0.0.hasPrefix("X-") }
            #expect(custom.map(\.0) == ["X-C", "X-A", "X-B", "X-A", "X-Empty"])
            #expect(custom.map(\.1) == ["3", "1", "2", "again", ""])
        }
    }

    @Test func responseHeadersLowercasedAndRepeatsKept() async throws {
        try await TestServers.withEchoServer { base in
            let response = try await client.send(HTTPRequest.get(url: base + "/headers"))
            #expect(response.headers.allSatisfy { $0.name == $0.name.lowercased() })
            #expect(response.headers.values(for: "set-cookie") == ["a=1", "b=2"])
            #expect(response.headers["X-Mixed-Case"] == "Yes")
            #expect(
                response.headers.map(\.name).filter { $0 != "server" && $0 != "date" }
                    == ["set-cookie", "x-mixed-case", "set-cookie", "content-length"])
        }
    }

    @Test(arguments: [400, 404, 429, 500, 503])
    func errorStatusesAreReturned(status: Int) async throws {
        try await TestServers.withEchoServer { base in
            let response = try await client.send(HTTPRequest.get(url: base + "/status/\(status)"))
            #expect(response.status == status)
            #expect(response.bodyText == "status body")
        }
    }

    @Test func bodyLimitWithContentLengthThrows() async throws {
        try await TestServers.withEchoServer { base in
            let small = HTTPClient(maxResponseBodyBytes: 1000)
            let fetched = try await small.send(HTTPRequest.get(url: base + "/big/1000"))
            #expect(fetched.body.count == 1000)
            let error = await expectError { try await small.send(HTTPRequest.get(url: base + "/big/5000")) }
            #expect(error?.code == .responseBodyTooLarge)
            #expect(error?.description.contains("limit") == true)
        }
    }

    @Test func bodyLimitWithoutContentLengthThrows() async throws {
        try await TestServers.withEchoServer { base in
            let small = HTTPClient(maxResponseBodyBytes: 100_000)
            let fetched = try await small.send(HTTPRequest.get(url: base + "/bigclose/50000"))
            #expect(fetched.body.count == 50_000)
            let error = await expectError { try await small.send(HTTPRequest.get(url: base + "/bigclose/300000")) }
            #expect(error?.code == .responseBodyTooLarge)
        }
    }

    @Test func defaultBodyLimitIsOneMiB() async throws {
        try await TestServers.withEchoServer { base in
            #expect(HTTPClient().maxResponseBodyBytes == 1 << 20)
            let fetched = try await client.send(HTTPRequest.get(url: base + "/big/\(1 << 20)"))
            #expect(fetched.body.count == 1 << 20)
            let error = await expectError {
                try await client.send(HTTPRequest.get(url: base + "/big/\((1 << 20) + 1)"))
            }
            #expect(error?.code == .responseBodyTooLarge)
        }
    }

    @Test func timeoutThrows() async throws {
        try await TestServers.withEchoServer { base in
            let start = Date()
            let error = await expectError {
                try await client.send(HTTPRequest(url: base + "/sleep", timeout: 0.3, connectTimeout: 0.3))
            }
            #expect(error?.code == .timeout)
            #expect(error?.description.contains("timed out") == true)
            // The server sleeps 10 s: finishing well before proves the timeout, not the answer, ended it (the bound
            // leaves a loaded 2-core machine seconds to spare).
            #expect(Date().timeIntervalSince(start) < 8)
        }
    }

    @Test func concurrentAsyncRequests() async throws {
        try await TestServers.withEchoServer { base in
            try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let response = try await client.send(HTTPRequest(url: base + "/n/\(index)", timeout: 5))
                        return try echo(response)["path"] as? String
                    }
                }
                var paths: Set<String> = []
                for try await path in group { if let path { paths.insert(path) } }
                #expect(paths == Set((0..<16).map { "/n/\($0)" }))
            }
        }
    }

    @Test func cancellationStopsTheTransfer() async throws {
        try await TestServers.withEchoServer { base in
            let task = Task { try await client.send(HTTPRequest(url: base + "/sleep", timeout: 10)) }
            try await Task.sleep(nanoseconds: 200_000_000)
            let cancelledAt = Date()
            task.cancel()
            let error = await expectError { try await task.value }
            #expect(error?.code == .cancelled)
            // Cancellation wakes the transfer loop (curl_multi_wakeup), so it ends long before the server's 10 s
            // answer or the 10 s timeout would.
            #expect(Date().timeIntervalSince(cancelledAt) < 8)
        }
    }
}

@Suite("Failures without a server")
struct FailureTests {
    let client = HTTPClient()

    @Test func connectionRefused() async throws {
        let port = try TestServers.freePort()
        let error = await expectError {
            try sendBlocking(client, HTTPRequest(url: "http://127.0.0.1:\(port)/", timeout: 2))
        }
        #expect(error?.code == .connectionRefused)
        #expect(error?.description.hasPrefix("connection refused") == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func invalidRequestsAreRejectedBeforeSending() async {
        let badHeader = await expectError {
            try await client.send(HTTPRequest.get(url: "http://127.0.0.1:9/", headers: ["X-Bad": "a\r\nInjected: 1"]))
        }
        #expect(badHeader?.code == .invalidRequest)
        let badMethod = await expectError {
            try await client.send(HTTPRequest(method: "GE T", url: "http://127.0.0.1:9/"))
        }
        #expect(badMethod?.code == .invalidRequest)
        let badTimeout = await expectError {
            try await client.send(HTTPRequest(url: "http://127.0.0.1:9/", timeout: 0))
        }
        #expect(badTimeout?.code == .invalidRequest)
        let scheme = await expectError { try await client.send(HTTPRequest(url: "file:///etc/passwd")) }
        #expect(scheme?.code == .unsupported)
    }

    @Test func errorsNeverContainTheBody() async throws {
        let port = try TestServers.freePort()
        let secret = "very-secret-token-\(UUID().uuidString)"
        let error = await expectError {
            try await client.send(HTTPRequest.post(url: "http://127.0.0.1:\(port)/", json: Array(secret.utf8)))
        }
        #expect(error?.description.contains(secret) == false)
    }

    @Test func asyncCallOnCancelledTaskThrowsCancelled() async {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(HTTPRequest(url: "http://127.0.0.1:9/"))
        }
        let error = await expectError { try await task.value }
        #expect(error?.code == .cancelled)
    }

    @Test func headersCollection() {
        var headers: HTTPHeaders = ["A": "1", "b": "2"]
        headers.add(name: "a", value: "3")
        #expect(headers.values(for: "A") == ["1", "3"])
        #expect(headers["B"] == "2")
        headers.remove(name: "A")
        #expect(headers.map(\.name) == ["b"])
        let json = HTTPRequest.post(
            url: "http://x/", json: [], headers: ["content-type": "application/merge-patch+json"])
        #expect(json.headers.values(for: "Content-Type") == ["application/merge-patch+json"])
    }
}

@Suite(
    "HTTP/2 against nghttpd",
    .enabled(if: TestServers.hasNghttpd, "nghttpd missing: apt-get install -y nghttp2-server")
)
struct HTTP2Tests {
    let client = HTTPClient()

    private func docroot() throws -> URL {
        let directory = try TestServers.temporaryDirectory()
        try "hello h2\n".write(to: directory.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
        return directory
    }

    @Test func priorKnowledgeCleartext() async throws {
        let root = try docroot()
        defer { try? FileManager.default.removeItem(at: root) }
        try await TestServers.withNghttpd(docroot: root, certificate: nil) { port in
            let response = try await client.send(
                HTTPRequest(url: "http://127.0.0.1:\(port)/index.txt", timeout: 5, version: .http2PriorKnowledge))
            #expect(response.status == 200)
            #expect(response.httpVersion == "2")
            #expect(response.bodyText == "hello h2\n")
            #expect(response.headers.allSatisfy { !$0.name.hasPrefix(":") && $0.name == $0.name.lowercased() })
            let missing = try await client.send(
                HTTPRequest(url: "http://127.0.0.1:\(port)/nope", timeout: 5, version: .http2PriorKnowledge))
            #expect(missing.status == 404)
            #expect(missing.httpVersion == "2")
            let posted = try await client.send(
                HTTPRequest(
                    method: "POST", url: "http://127.0.0.1:\(port)/echo", body: Array("h2 body".utf8), timeout: 5,
                    version: .http2PriorKnowledge))
            #expect(posted.bodyText == "h2 body")
        }
    }

    @Test func http2OverTLSWithCAFile() async throws {
        let root = try docroot()
        defer { try? FileManager.default.removeItem(at: root) }
        let certificate = try TestSupport.selfSignedCertificate(in: root.path)
        try await TestServers.withNghttpd(docroot: root, certificate: certificate) { port in
            let url = "https://127.0.0.1:\(port)/index.txt"
            for version in [HTTPVersionPreference.http2OverTLS, .automatic] {
                let response = try await client.send(
                    HTTPRequest(
                        url: url, timeout: 5, version: version,
                        tls: HTTPTLSOptions(caFilePath: certificate.certificate)))
                #expect(response.status == 200)
                #expect(response.httpVersion == "2")
                #expect(response.bodyText == "hello h2\n")
            }
            let pinned = try await client.send(
                HTTPRequest(
                    url: url, timeout: 5,
                    tls: HTTPTLSOptions(caFilePath: certificate.certificate, pinnedPublicKey: certificate.publicKey)))
            #expect(pinned.status == 200)
            let pinnedByHash = try await client.send(
                HTTPRequest(
                    url: url, timeout: 5,
                    tls: HTTPTLSOptions(
                        caFilePath: certificate.certificate, pinnedPublicKey: certificate.publicKeyPin)))
            #expect(pinnedByHash.status == 200)
            let insecure = try await client.send(
                HTTPRequest(url: url, timeout: 5, tls: HTTPTLSOptions(insecureSkipVerify: true)))
            #expect(insecure.httpVersion == "2")
        }
    }

    @Test func tlsFailuresAreClassified() async throws {
        let root = try docroot()
        defer { try? FileManager.default.removeItem(at: root) }
        let certificate = try TestSupport.selfSignedCertificate(in: root.path)
        let other = try TestSupport.selfSignedCertificate(in: root.path, name: "other")
        try await TestServers.withNghttpd(docroot: root, certificate: certificate) { port in
            let url = "https://127.0.0.1:\(port)/index.txt"
            let untrusted = await expectError {
                try await client.send(
                    HTTPRequest(url: url, timeout: 5, tls: HTTPTLSOptions(caFilePath: other.certificate)))
            }
            #expect(untrusted?.code == .tlsCertificateInvalid)
            let pinMismatch = await expectError {
                try await client.send(
                    HTTPRequest(
                        url: url, timeout: 5,
                        tls: HTTPTLSOptions(caFilePath: certificate.certificate, pinnedPublicKey: other.publicKey)))
            }
            #expect(pinMismatch?.code == .tlsPinnedKeyMismatch)
            let missingCA = await expectError {
                try await client.send(
                    HTTPRequest(
                        url: url, timeout: 5,
                        tls: HTTPTLSOptions(caFilePath: root.appendingPathComponent("absent.pem").path)))
            }
            #expect(missingCA?.code == .tlsConfiguration)
        }
    }
}

// The certificates are made in process (NSECertificates); like the HTTP/1.1 suite, this needs only python3.
@Suite("Mutual TLS against a Python HTTPS server")
struct MutualTLSTests {
    @Test func clientCertificateIsPresented() async throws {
        let directory = try TestServers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try TestSupport.selfSignedCertificate(in: directory.path)
        let clientIdentity = try TestSupport.selfSignedCertificate(in: directory.path, name: "client")
        let client = HTTPClient()
        let mutualTLS = (cert: server.certificate, key: server.key, clientCA: clientIdentity.certificate)
        try await TestServers.withEchoServer(mutualTLS: mutualTLS) { base in
            let tls = HTTPTLSOptions(
                caFilePath: server.certificate,
                clientCertificate: HTTPClientCertificate(
                    certificatePath: clientIdentity.certificate, keyPath: clientIdentity.key)
            )
            let response = try await client.send(
                HTTPRequest(method: "POST", url: base + "/mtls", body: Array("m".utf8), timeout: 5, tls: tls))
            #expect(response.status == 200)
            #expect(response.httpVersion == "1.1")
            #expect(try echo(response)["body"] as? String == "m")
            let anonymous = await expectError {
                try await client.send(
                    HTTPRequest(url: base + "/mtls", timeout: 5, tls: HTTPTLSOptions(caFilePath: server.certificate)))
            }
            #expect(anonymous != nil)
        }
    }
}
