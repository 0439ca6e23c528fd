import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// Each fault as a client sees it on the wire, set from the command line or the control API, and the request log.
@Suite(.serialized) struct FaultTests {
    let folder: String

    init() throws {
        folder = try TestSupport.temporaryDirectory("nse-files-faults")
    }

    /// A server with `arguments`, and one uploaded file of `size` bytes: its bytes and URL.
    func serverWithFile(_ arguments: [String] = [], size: Int = 100_000, curlOptions: [String] = []) throws -> (
        FileServerProcess, bytes: [UInt8], url: String
    ) {
        let server = try FileServerProcess(arguments)
        let blob = try Blobs.make(size, in: folder, name: "f-\(UUID().uuidString)")
        let answer = try Curl.upload(blob.path, to: server.url, curlOptions)
        let url = try #require(answer.json?["url"]?.stringValue, "\(answer.text)")
        return (server, blob.bytes, url)
    }

    /// POSTs a JSON rule (or list) to the control API.
    func addFaults(_ server: FileServerProcess, _ json: String) throws -> Fetched {
        try Curl.fetch(["-H", "Content-Type: application/json", "--data-binary", json, server.url + "/control/faults"])
    }

    @Test func slowSendsAtTheRateAsked() throws {
        let (server, bytes, url) = try serverWithFile(["--fault", "slow:100000"], size: 200_000)
        defer { server.stop() }
        let download = try Curl.fetch([url])
        #expect(download.body == bytes)
        // 200 KB at 100 KB/s: about 2 s (the first tenth goes at once).
        #expect(download.seconds >= 1.2, "\(download.seconds) s")
        #expect(download.seconds < 20)
    }

    @Test func truncateClosesAfterThatManyBytes() throws {
        let (server, bytes, url) = try serverWithFile()
        defer { server.stop() }
        let added = try addFaults(server, #"[{"fault":"truncate","after_bytes":1000,"count":1}]"#)
        #expect(added.status == 201, "\(added.text)")
        let cut = try Curl.fetch([url])
        #expect(cut.status == 200)
        #expect(cut.headers["content-length"] == "100000")
        #expect(cut.body == Array(bytes[0..<1000]))
        #expect(cut.exitCode == 18, "curl: \(cut.stderr)")  // CURLE_PARTIAL_FILE
        // Used once: the next download is whole.
        #expect(try Curl.fetch([url]).body == bytes)
        let log = try Curl.fetch([server.url + "/control/requests"]).json?.arrayValue ?? []
        let truncated = try #require(log.first { $0["faults"]?.arrayValue == ["truncate"] })
        #expect(truncated["bytes_sent"]?.intValue == 1000)
        #expect(truncated["complete"]?.boolValue == false)
        #expect(truncated["status"]?.intValue == 200)
    }

    @Test func truncateOverTLSAndHTTP2() throws {
        let certificate = try TestSupport.selfSignedCertificate(in: folder, name: "trunc")
        let (server, bytes, url) = try serverWithFile(
            ["--tls-cert", certificate.certificate, "--tls-key", certificate.key, "--fault", "truncate:5000"],
            curlOptions: ["--cacert", certificate.certificate])
        defer { server.stop() }
        for version in ["--http1.1", "--http2"] {
            let cut = try Curl.fetch([version, "--cacert", certificate.certificate, url])
            #expect(cut.body.count < bytes.count, "\(version)")
            #expect(cut.body.count <= 5000, "\(version)")
            #expect(cut.body == Array(bytes[0..<cut.body.count]))
            #expect(cut.exitCode != 0, "\(version)")
        }
    }

    @Test func wrongHashChangesTheBytesNotTheSize() throws {
        let (server, bytes, url) = try serverWithFile(["--fault", "wrong-hash"])
        defer { server.stop() }
        let download = try Curl.fetch([url])
        #expect(download.status == 200)
        #expect(download.body.count == bytes.count)
        #expect(Blobs.sha256(download.body) != Blobs.sha256(bytes))
        // The ETag stays the uploaded file's SHA-256, which the body no longer matches.
        #expect(download.headers["etag"] == "\"\(Blobs.sha256(bytes))\"")
        #expect(download.body.first == ~bytes[0] && download.body.last == ~bytes[bytes.count - 1])
        #expect(download.body[1..<(bytes.count - 1)] == bytes[1..<(bytes.count - 1)])
        // A range that holds neither end is unchanged; one that holds the last byte is not.
        #expect(try Curl.fetch(["-H", "Range: bytes=10-19", url]).body == Array(bytes[10..<20]))
        #expect(try Curl.fetch(["-H", "Range: bytes=-1", url]).body == [~bytes[bytes.count - 1]])
    }

    @Test func notFoundForOneFileOnly() throws {
        let (server, bytes, url) = try serverWithFile()
        defer { server.stop() }
        let other = try Blobs.make(1000, in: folder, name: "other")
        let otherURL = try #require(try Curl.upload(other.path, to: server.url).json?["url"]?.stringValue)
        let id = String(url.split(separator: "/").last ?? "")
        let added = try addFaults(server, #"{"fault":"not-found","file":"\#(id)","count":2}"#)
        #expect(added.status == 201)
        #expect(added.json?["remaining"]?.intValue == 2)
        #expect(try Curl.fetch([url]).status == 404)
        #expect(try Curl.fetch([otherURL]).body == other.bytes)
        #expect(try Curl.fetch(["-I", url]).status == 404)
        // Used up after two.
        #expect(try Curl.fetch([url]).body == bytes)
    }

    @Test func delayWaitsBeforeAnswering() throws {
        let (server, bytes, url) = try serverWithFile(["--fault", "delay:1.5,count=1"])
        defer { server.stop() }
        let late = try Curl.fetch([url])
        #expect(late.body == bytes)
        #expect(late.seconds >= 1.2, "\(late.seconds) s")
        let log = try Curl.fetch([server.url + "/control/requests?limit=1"]).json?.arrayValue ?? []
        #expect(log.first?["faults"]?.arrayValue == ["delay"])
        // A client that gives up during the delay.
        #expect(try addFaults(server, #"{"fault":"delay","seconds":30}"#).status == 201)
        let impatient = try Curl.fetch(["--max-time", "1", url])
        #expect(impatient.exitCode == 28)  // CURLE_OPERATION_TIMEDOUT
    }

    @Test func theControlAPIListsAddsAndRemovesRules() throws {
        let server = try FileServerProcess(["--fault", "slow:20000", "--fault", "truncate:10,count=3"])
        defer { server.stop() }
        let listed = try Curl.fetch([server.url + "/control/faults"])
        let rules = listed.json?["rules"]?.arrayValue ?? []
        #expect(rules.count == 2)
        #expect(rules.first?["fault"]?.stringValue == "slow")
        #expect(rules.first?["bytes_per_second"]?.intValue == 20000)
        #expect(rules.first?["remaining"] == JSON.null)
        #expect(rules.last?["remaining"]?.intValue == 3)
        for bad in [
            #"{"fault":"slow"}"#, #"{"fault":"melt"}"#, #"{"fault":"delay","seconds":-1}"#,
            #"{"fault":"not-found","file":"../x"}"#, #"{"fault":"wrong-hash","extra":1}"#, "not json",
        ] {
            let refused = try addFaults(server, bad)
            #expect(refused.status == 400, "\(bad)")
            #expect(refused.json?["reason"]?.stringValue == "BadFault", "\(bad)")
        }
        let id = try #require(rules.first?["id"]?.intValue)
        #expect(try Curl.fetch(["-X", "DELETE", server.url + "/control/faults/\(id)"]).status == 204)
        #expect(try Curl.fetch(["-X", "DELETE", server.url + "/control/faults/\(id)"]).status == 404)
        #expect(try Curl.fetch(["-X", "DELETE", server.url + "/control/faults"]).status == 204)
        #expect(try Curl.fetch([server.url + "/control/faults"]).json?["rules"]?.arrayValue == [])
    }

    @Test func theRequestLogSaysWhatWasAskedAndSent() throws {
        let (server, _, url) = try serverWithFile(size: 5000)
        defer { server.stop() }
        _ = try Curl.fetch(["-H", "Range: bytes=100-199", url])
        _ = try Curl.fetch(["-H", "Range: bytes=-10", url])
        _ = try Curl.fetch(["-I", url])
        _ = try Curl.fetch([server.url + "/files/" + String(repeating: "1", count: 32)])
        let log = try Curl.fetch([server.url + "/control/requests"]).json?.arrayValue ?? []
        // Newest first: the 404, the HEAD, the two ranges, the upload.
        #expect(log.map { $0["status"]?.intValue } == [404, 200, 206, 206, 201])
        #expect(log.map { $0["method"]?.stringValue } == ["GET", "HEAD", "GET", "GET", "POST"])
        #expect(log[2]["range"]?.stringValue == "bytes=-10" && log[2]["bytes_sent"]?.intValue == 10)
        #expect(log[3]["range"]?.stringValue == "bytes=100-199" && log[3]["bytes_sent"]?.intValue == 100)
        #expect(log[1]["bytes_sent"]?.intValue == 0)
        #expect(log[4]["bytes_received"]?.intValue == 5000)
        #expect(log[4]["file"]?.stringValue == String(url.split(separator: "/").last ?? ""))
        #expect(log.allSatisfy { $0["complete"]?.boolValue == true })
        let since = try #require(log[1]["id"]?.intValue)
        #expect(try Curl.fetch([server.url + "/control/requests?since=\(since)"]).json?.arrayValue?.count == 1)
        #expect(try Curl.fetch(["-X", "DELETE", server.url + "/control/requests"]).status == 204)
        #expect(try Curl.fetch([server.url + "/control/requests"]).json?.arrayValue == [])
    }
}
