import Foundation
import NSEJSON
import NSETestSupport
import Testing

/// `nse files` on loopback, driven by curl: uploads (raw and as liblinphone's form), downloads whole, by range and
/// by HEAD, and what it refuses.
@Suite(.serialized) struct UploadDownloadTests {
    let folder: String
    let server: FileServerProcess

    init() throws {
        folder = try TestSupport.temporaryDirectory("nse-files-updown")
        server = try FileServerProcess(["--max-size", "1000000"])
    }

    /// Uploads `bytes` and returns the answer's document.
    func upload(_ size: Int) throws -> (bytes: [UInt8], answer: JSON, fetched: Fetched) {
        let blob = try Blobs.make(size, in: folder, name: "up-\(UUID().uuidString)")
        let fetched = try Curl.upload(blob.path, to: server.url)
        #expect(fetched.status == 201, "\(fetched.text) \(fetched.stderr)")
        return (blob.bytes, fetched.json ?? .null, fetched)
    }

    @Test func anUploadComesBackByteForByteWithItsSHA256() throws {
        #expect(server.url.hasPrefix("http://127.0.0.1:"))
        #expect(server.listening["storage"]?.stringValue == server.storage)
        let (bytes, answer, fetched) = try upload(300_000)
        let url = try #require(answer["url"]?.stringValue)
        #expect(url.hasPrefix(server.url + "/files/"))
        #expect(fetched.headers["location"] == url)
        #expect(answer["size"]?.intValue == 300_000)
        #expect(answer["sha256"]?.stringValue == Blobs.sha256(bytes))
        let id = String(url.dropFirst((server.url + "/files/").count))
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))

        let download = try Curl.fetch([url])
        #expect(download.status == 200)
        #expect(download.body == bytes)
        #expect(download.headers["content-length"] == "300000")
        #expect(download.headers["accept-ranges"] == "bytes")
        #expect(download.headers["etag"] == "\"\(Blobs.sha256(bytes))\"")
        #expect(download.headers["content-type"] == "application/octet-stream")
    }

    @Test func theFileIsOnDiskWholeWhenThe201Arrives() throws {
        let (bytes, answer, _) = try upload(200_000)
        let url = try #require(answer["url"]?.stringValue)
        let id = String(url.split(separator: "/").last ?? "")
        // Read the moment curl has the answer: the file is in its place, whole, with its metadata.
        let stored = try Data(contentsOf: URL(fileURLWithPath: "\(server.storage)/\(id)/blob"))
        #expect([UInt8](stored) == bytes)
        let metadata = try JSON.parse(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(server.storage)/\(id)/meta.json"))))
        #expect(metadata["sha256"]?.stringValue == Blobs.sha256(bytes))
        #expect(metadata["size"]?.intValue == 200_000)
        // No temporary upload folder is left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: server.storage)
        #expect(!names.contains { $0.hasPrefix(".upload-") })
    }

    @Test func aMultipartFormAsLiblinphoneSendsIt() throws {
        let blob = try Blobs.make(150_000, in: folder, name: "voice.m4a.enc")
        // A text field before the file part, as forms may have; the file in the part named File.
        let fetched = try Curl.fetch([
            "-F", "note=hello", "-F", "File=@\(blob.path);type=application/octet-stream", server.url + "/files",
        ])
        #expect(fetched.status == 201, "\(fetched.text)")
        #expect(fetched.json?["size"]?.intValue == 150_000)
        #expect(fetched.json?["sha256"]?.stringValue == Blobs.sha256(blob.bytes))
        let url = try #require(fetched.json?["url"]?.stringValue)
        #expect(try Curl.fetch([url]).body == blob.bytes)

        // A form without a file part is refused.
        let noFile = try Curl.fetch(["-F", "note=hello", server.url + "/files"])
        #expect(noFile.status == 400)
        #expect(noFile.json?["reason"]?.stringValue == "BadUpload")
    }

    @Test func anEmptyPostIsAnsweredNoContentAsFlexisipDoes() throws {
        let fetched = try Curl.fetch(["-X", "POST", server.url + "/files"])
        #expect(fetched.status == 204)
        let names = try FileManager.default.contentsOfDirectory(atPath: server.storage)
        #expect(names.isEmpty)
    }

    @Test func rangesAreServedAsAsked() throws {
        let (bytes, answer, _) = try upload(10_000)
        let url = try #require(answer["url"]?.stringValue)
        for (range, slice, contentRange) in [
            ("bytes=100-199", 100..<200, "bytes 100-199/10000"),
            ("bytes=9000-", 9000..<10_000, "bytes 9000-9999/10000"),
            ("bytes=-500", 9500..<10_000, "bytes 9500-9999/10000"),
            ("bytes=9990-20000", 9990..<10_000, "bytes 9990-9999/10000"),
        ] {
            let part = try Curl.fetch(["-H", "Range: \(range)", url])
            #expect(part.status == 206, "\(range)")
            #expect(part.body == Array(bytes[slice]), "\(range)")
            #expect(part.headers["content-range"] == contentRange)
            #expect(part.headers["content-length"] == String(slice.count))
        }
        let unsatisfiable = try Curl.fetch(["-H", "Range: bytes=10000-", url])
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.headers["content-range"] == "bytes */10000")
        // Several ranges: the whole file, 200.
        let several = try Curl.fetch(["-H", "Range: bytes=0-9,20-29", url])
        #expect(several.status == 200)
        #expect(several.body == bytes)
        // An If-Range that is not this file's ETag: the whole file.
        let stale = try Curl.fetch(["-H", "Range: bytes=0-9", "-H", "If-Range: \"0000\"", url])
        #expect(stale.status == 200 && stale.body.count == 10_000)
        let current = try Curl.fetch(["-H", "Range: bytes=0-9", "-H", "If-Range: \"\(Blobs.sha256(bytes))\"", url])
        #expect(current.status == 206 && current.body == Array(bytes[0..<10]))
    }

    @Test func headAnswersTheHeadAlone() throws {
        let (bytes, answer, _) = try upload(5000)
        let url = try #require(answer["url"]?.stringValue)
        let head = try Curl.fetch(["-I", url])
        #expect(head.status == 200)
        #expect(head.downloaded == 0)
        #expect(head.headers["content-length"] == "5000")
        #expect(head.headers["etag"] == "\"\(Blobs.sha256(bytes))\"")
        #expect(head.headers["accept-ranges"] == "bytes")
        let ranged = try Curl.fetch(["-I", "-H", "Range: bytes=0-99", url])
        #expect(ranged.status == 206)
        #expect(ranged.headers["content-range"] == "bytes 0-99/5000")
        #expect(try Curl.fetch(["-I", server.url + "/files/" + String(repeating: "0", count: 32)]).status == 404)
    }

    @Test func unknownFilesAndPathsOutsideTheStorageAre404() throws {
        let (_, answer, _) = try upload(100)
        let url = try #require(answer["url"]?.stringValue)
        let id = String(url.split(separator: "/").last ?? "")
        // Files beside and above the storage folder, which no path may reach.
        try "secret".write(toFile: server.storage + "/../secret", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(
            atPath: server.storage + "/" + String(repeating: "a", count: 32), withIntermediateDirectories: true)
        for path in [
            "/files/" + String(repeating: "0", count: 32), "/files/../secret", "/files/..%2Fsecret",
            "/files/..%2F..%2F..%2Fetc%2Fpasswd", "/files/%2e%2e/secret", "/files/\(id)/../../secret",
            "/files/\(id)/blob", "/files/\(id)/meta.json", "/files/\(id.uppercased())", "/files/\(id)%00",
            "/files/.upload-1-00", "/files/" + String(repeating: "a", count: 32), "/files/", "/secret",
        ] {
            let fetched = try Curl.fetch(["--path-as-is", server.url + path])
            #expect(fetched.status == 404, "\(path): \(fetched.status)")
            #expect(!fetched.text.contains("secret"), "\(path)")
        }
    }

    @Test func aFileOverMaxSizeIs413AndLeavesNothing() throws {
        let big = try Blobs.make(1_500_000, in: folder, name: "big.bin")
        // Announced by Content-Length: refused before the body (curl asks 100-continue and gets the 413).
        let announced = try Curl.upload(big.path, to: server.url)
        #expect(announced.status == 413)
        #expect(announced.json?["reason"]?.stringValue == "TooLarge")
        // Streamed without a length: refused once the bytes pass the limit.
        let streamed = try Curl.upload(big.path, to: server.url, ["-H", "Transfer-Encoding: chunked"])
        #expect(streamed.status == 413)
        // A form whose file is too large.
        let form = try Curl.fetch(["-H", "Expect:", "-F", "File=@\(big.path)", server.url + "/files"])
        #expect(form.status == 413)
        let names = try FileManager.default.contentsOfDirectory(atPath: server.storage)
        #expect(names.isEmpty, "\(names)")
        // Just under the limit is fine.
        let fits = try Blobs.make(1_000_000, in: folder, name: "fits.bin")
        #expect(try Curl.upload(fits.path, to: server.url).status == 201)
    }
}
