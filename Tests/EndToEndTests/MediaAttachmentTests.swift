import Foundation
import NSECrypto
import NSEJSON
import NSETestSupport
import Testing

/// A message with a photo or a voice note, end to end as a user runs it: `nse files` serves the encrypted file,
/// `nse seal --attach` encrypts and uploads it, `nse run` runs the reference extension, which downloads, checks and
/// decrypts it into an attachment the host judges as iOS does (docs/media.md).
@Suite(.serialized) struct MediaAttachmentTests {
    let root: String
    let device: String

    init() throws {
        root = try TestSupport.temporaryDirectory("nse-media")
        device = root + "/bob"
        let created = try TestSupport.nse(["device", "init", device])
        try #require(created.status == 0, "\(created.stderr)")
    }

    /// `nse files` on a free loopback port, with `faults` (`--fault` specs); its URL.
    func startFiles(_ faults: [String] = [], name: String = "files") throws -> (CallCommandTests.Background, String) {
        let server = try CallCommandTests.Background(
            TestSupport.nse,
            ["files", "--listen", "127.0.0.1:0", "--storage", root + "/\(name)-store"]
                + faults.flatMap { ["--fault", $0] }, in: root, name: name)
        return (server, try server.listeningURL())
    }

    func stop(_ server: CallCommandTests.Background) {
        kill(server.process.processIdentifier, SIGTERM)
        #expect(server.wait(timeout: 5) == 0, "nse files did not exit 0 within 5 s of SIGTERM: \(server.errors)")
    }

    /// A file of `size` bytes (deterministic, not compressible text) named `name`.
    func file(_ name: String, size: Int) throws -> String {
        let path = root + "/" + name
        var bytes = [UInt8](repeating: 0, count: size)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The push for a plaintext sealed with `nse seal` (and its `--attach` options).
    func push(_ plaintext: String, _ options: [String]) throws -> String {
        try Self.sealedPushFile(plaintext, to: device, in: root, options: options)
    }

    /// A push file (in `folder`) whose `enc` is `plaintext` sealed to `device` with `nse seal` and its `options`.
    static func sealedPushFile(_ plaintext: String, to device: String, in folder: String, options: [String] = [])
        throws -> String
    {
        let sealed = try TestSupport.nse(["seal", "--device", device] + options, stdin: plaintext)
        try #require(sealed.status == 0, "\(sealed.stderr)")
        let envelope = sealed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let path = folder + "/push-\(UUID().uuidString).json"
        try TestSupport.write(
            #"{"aps":{"alert":{"title":"New message","body":"(encrypted)"},"mutable-content":1},"enc":"\#(envelope)"}"#,
            to: path)
        return path
    }

    static let message = #"{"type":"message","from":"sip:alice@example.org","display_name":"Alice","text":"Lunch?"}"#

    func run(_ push: String, _ options: [String] = []) throws -> JSON {
        let run = try TestSupport.nse(["run", "--device", device] + options + [push])
        #expect(run.status == 0, "\(run.stderr)")
        return try JSON.parse(run.stdout)
    }

    func attachmentResults(_ result: JSON) -> [String] {
        result["extension"]?["info"]?["attachments"]?.arrayValue?.compactMap { $0["result"]?.stringValue } ?? []
    }

    @Test func aNineMegabytePhotoIsDecryptedAndAttachedWithinTheMemoryLimit() throws {
        let (server, url) = try startFiles()
        defer { stop(server) }
        let photo = try file("lunch.jpg", size: 9 * 1024 * 1024)
        let result = try run(try push(Self.message, ["--attach", photo, "--files", url]))
        #expect(result["outcome"] == "rewritten", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("decrypted:") == true)
        #expect(result["display"]?["body"]?.stringValue == "Lunch?")
        let attachments = try #require(result["attachments"]?.arrayValue, "\(result)")
        try #require(attachments.count == 1)
        #expect(attachments[0]["type"]?.stringValue == "public.jpeg")
        #expect(attachments[0]["size"]?.intValue == Int64(9 * 1024 * 1024))
        let stored = try #require(attachments[0]["path"]?.stringValue)
        #expect(FileManager.default.contentsEqual(atPath: stored, andPath: photo))
        // Decrypted a chunk at a time: far below the 24 MB an extension has, though the file is 9 MB.
        let footprint = try #require(result["extension"]?["peak_footprint_kb"]?.intValue)
        #expect(footprint < 12 * 1024, "footprint \(footprint) KB")
        // Neither the file's name nor its text is in the result's log or reason.
        let log = result["extension"]?["stderr"]?.stringValue ?? ""
        #expect(!log.contains("lunch.jpg"))
    }

    @Test func aVoiceNoteIsAttachedWithTheLengthItsHeadersSay() throws {
        let (server, url) = try startFiles()
        defer { stop(server) }
        let voice = root + "/note.wav"
        try Data(MediaSamples.wave(seconds: 7.25, rate: 16_000)).write(to: URL(fileURLWithPath: voice))
        let result = try run(try push(Self.message, ["--attach", voice, "--files", url]))
        #expect(result["outcome"] == "rewritten", "\(result)")
        let attachment = try #require(result["attachments"]?.arrayValue?.first, "\(result)")
        #expect(attachment["kind"]?.stringValue == "audio")
        #expect(attachment["type"]?.stringValue == "com.microsoft.waveform-audio")
        #expect(attachment["duration"]?.doubleValue == 7.25, "\(attachment)")
    }

    @Test func iOSLimitsRefuseAnElevenMegabytePhotoAndALongVoiceNote() throws {
        let (server, url) = try startFiles()
        defer { stop(server) }
        let photo = try file("big.jpg", size: 11 * 1024 * 1024)
        let voice = try file("voice.m4a", size: 5 * 1024 * 1024 + 100 * 1024)
        let small = try file("small.png", size: 2_000)
        let result = try run(
            try push(Self.message, ["--attach", photo, "--attach", voice, "--attach", small, "--files", url]))
        #expect(result["outcome"] == "rewritten", "\(result)")
        // The extension fetched all three; iOS (the host) shows only the one within its kind's limit.
        #expect(attachmentResults(result) == ["attached", "attached", "attached"], "\(result)")
        let attachments = result["attachments"]?.arrayValue ?? []
        #expect(attachments.map { $0["type"]?.stringValue } == ["public.png"], "\(result)")
        let warnings = result["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(
            warnings.filter { $0.contains("UNErrorDomain 102 attachmentInvalidFileSize") }.count == 2, "\(warnings)")
    }

    @Test(arguments: [
        ("truncate:100000", "attachment-unavailable"), ("wrong-hash", "attachment-corrupt"),
        ("not-found", "attachment-unavailable"),
    ])
    func aFileServerFaultShowsTheMessageWithoutItsFile(fault: String, code: String) throws {
        let (server, url) = try startFiles([fault])
        defer { stop(server) }
        let photo = try file("photo.jpg", size: 300_000)
        let result = try run(try push(Self.message, ["--attach", photo, "--files", url]))
        #expect(result["outcome"] == "rewritten", "\(result)")
        #expect(result["display"]?["body"]?.stringValue == "Lunch?")
        #expect(
            result["reason"]?.stringValue?.hasPrefix("\(code): the message is shown without attachment 1 of 1") == true,
            "\(result)")
        #expect(result["attachments"] == nil || result["attachments"]?.arrayValue?.isEmpty == true, "\(result)")
        #expect(attachmentResults(result) == [code])
        // No partial file is left for the host to show.
        let scratch = (try? FileManager.default.subpathsOfDirectory(atPath: device + "/tmp")) ?? []
        #expect(!scratch.contains { $0.hasSuffix(".jpg") }, "\(scratch)")
    }

    @Test func aFileWhoseHashIsNotTheMessagesIsRefused() throws {
        let (server, url) = try startFiles()
        defer { stop(server) }
        let photo = try file("photo.png", size: 70_000)
        let blob = root + "/photo.blob"
        let media = try MediaCipher.encryptFile(at: photo, to: blob)
        let uploaded = try TestSupport.run(
            "/usr/bin/curl",
            [
                "-s", "-X", "POST", "-H", "Content-Type: application/octet-stream", "--data-binary", "@\(blob)",
                url + "/files",
            ],
            timeout: 20)
        let answer = try JSON.parse(uploaded.stdout)
        let fileURL = try #require(answer["url"]?.stringValue, "\(uploaded.stdout)")
        // The sender's reference names another hash: the file is intact, but not the one the message vouches for.
        let wrong = String(Hex.encode(media.sha256).reversed())
        let plaintext =
            #"{"type":"message","from":"sip:alice@example.org","text":"Look","attachments":[{"content_type":"image/png","name":"photo.png","size":70000,"url":"\#(fileURL)","key":"\#(Base64.encode(media.key))","sha256":"\#(wrong)"}]}"#
        let result = try run(try push(plaintext, []))
        #expect(result["reason"]?.stringValue?.hasPrefix("attachment-hash-mismatch:") == true, "\(result)")
        #expect(attachmentResults(result) == ["attachment-hash-mismatch"])
    }

    @Test func aTypeIOSCannotAttachIsNotDownloaded() throws {
        let (server, url) = try startFiles()
        defer { stop(server) }
        let document = try file("minutes.pdf", size: 5_000)
        let result = try run(try push(Self.message, ["--attach", document, "--files", url]))
        #expect(result["reason"]?.stringValue?.hasPrefix("attachment-unsupported:") == true, "\(result)")
        let log = try TestSupport.run("/usr/bin/curl", ["-s", url + "/control/requests"], timeout: 10)
        #expect(!log.stdout.contains("\"GET\""), "the extension downloaded a file it cannot attach: \(log.stdout)")
    }

    @Test func aDownloadPastTheBudgetGoesWithoutTheFile() throws {
        let (server, url) = try startFiles(["slow:20000"])
        defer { stop(server) }
        let photo = try file("slow.jpg", size: 400_000)
        let started = Date()
        let result = try run(try push(Self.message, ["--attach", photo, "--files", url]), ["--budget", "1.5"])
        // The expiry notice cancels the download; the best attempt (the text) goes at once, not 20 s later.
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(result["display"]?["body"]?.stringValue == "Lunch?", "\(result)")
        #expect(result["reason"]?.stringValue?.hasPrefix("time-will-expire:") == true, "\(result)")
        #expect(attachmentResults(result) == ["attachment-timed-out"], "\(result)")
    }

    /// A photo sent over SIP (`nse send --seal-to --attach`): the extension fetches the MESSAGE by Call-ID, opens it,
    /// then fetches its file, as a messenger's extension does.
    @Test func aPhotoInAMessageFetchedOverSIPIsAttached() throws {
        let (files, url) = try startFiles()
        defer { stop(files) }
        let server = try SIPServerProcess(["--listen", "tcp:127.0.0.1:0", "--no-push", "--db", root + "/sip.db"])
        defer { server.stop() }
        let proxy = try #require(server.uris["tcp"])
        let phone = root + "/phone"
        let created = try TestSupport.nse([
            "device", "init", phone, "--sip-account", "sip:bob@example.org", "--sip-proxy", proxy,
        ])
        try #require(created.status == 0, "\(created.stderr)")
        #expect(try TestSupport.nse(["device", "register", phone]).status == 0)
        let photo = try file("beach.png", size: 500_000)
        let sent = try TestSupport.nse([
            "send", "--proxy", proxy, "--from", "sip:alice@example.org", "--to", "sip:bob@example.org", "--text",
            "Beach!", "--seal-to", phone, "--display-name", "Alice", "--timeout", "10", "--attach", photo, "--files",
            url,
        ])
        try #require(sent.status == 0, "\(sent.stderr)")
        let callID = try #require(try JSON.parse(sent.stdout)["call_id"]?.stringValue)
        #expect(server.waitFor("held", ["call_id": callID]) != nil)
        let push = root + "/sip-push.json"
        try TestSupport.write(
            #"{"aps":{"alert":{"loc-key":"IM_MSG","loc-args":["Alice"]},"mutable-content":1},"call-id":"\#(callID)"}"#,
            to: push)
        let output = try TestSupport.nse(["run", "--device", phone, push])
        let result = try JSON.parse(output.stdout)
        #expect(result["outcome"] == "rewritten", "\(result)")
        #expect(result["display"]?["body"]?.stringValue == "Beach!")
        let attachments = result["attachments"]?.arrayValue ?? []
        #expect(attachments.map { $0["type"]?.stringValue } == ["public.png"], "\(result)")
        if let stored = attachments.first?["path"]?.stringValue {
            #expect(FileManager.default.contentsEqual(atPath: stored, andPath: photo))
        }
        #expect(result["extension"]?["info"]?["encrypted"] == true)
    }
}
