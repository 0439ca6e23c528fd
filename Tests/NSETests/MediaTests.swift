import Foundation
import NSECrypto
import NSEDevice
import NSEJSON
import NSEMedia
import NSEPayload
import Testing

/// An attachment's encryption (secretstream in 64 KiB chunks) and its reference in a message.
@Suite struct MediaCipherTests {
    func encrypted(_ size: Int) throws -> (plaintext: [UInt8], blob: [UInt8], media: EncryptedMedia) {
        let folder = NSTemporaryDirectory() + "nse-media-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        _ = FileManager.default.createFile(atPath: folder + "/in", contents: Data(plaintext))
        let media = try MediaCipher.encryptFile(at: folder + "/in", to: folder + "/out")
        let blob = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/out")))
        return (plaintext, blob, media)
    }

    /// Decrypts `blob` fed in pieces of `piece` bytes.
    func decrypt(_ blob: [UInt8], key: [UInt8], piece: Int) throws -> (plaintext: [UInt8], sha256: [UInt8]) {
        var decryptor = try MediaDecryptor(key: key)
        var plaintext: [UInt8] = []
        var offset = 0
        while offset < blob.count {
            let end = min(offset + piece, blob.count)
            try blob[offset..<end].withUnsafeBytes { bytes in
                try decryptor.take(bytes) { plaintext.append(contentsOf: $0) }
            }
            offset = end
        }
        let digest = try decryptor.finish { plaintext.append(contentsOf: $0) }
        return (plaintext, digest)
    }

    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 3 * 65_536, 200_001])
    func roundTripsWhateverTheSizeAndThePieces(size: Int) throws {
        let (plaintext, blob, media) = try encrypted(size)
        #expect(blob.count == Int(MediaCipher.ciphertextSize(plaintextSize: Int64(size))))
        #expect(media.plaintextSize == Int64(size))
        #expect(media.ciphertextSize == Int64(blob.count))
        #expect(media.sha256 == Digest.sha256(blob))
        for piece in [1, 17, 4096, 70_000, 1 << 20] where piece < 2 * blob.count || piece == 1 << 20 {
            if size > 70_000 && piece == 1 { continue }
            let opened = try decrypt(blob, key: media.key, piece: piece)
            #expect(opened.plaintext == plaintext, "size \(size), pieces of \(piece)")
            #expect(opened.sha256 == media.sha256)
        }
    }

    @Test func aTruncatedAlteredOrExtendedFileIsRefused() throws {
        let (_, blob, media) = try encrypted(150_000)
        // Cut at a chunk boundary: every chunk so far authenticates, but the final one never came.
        let boundary = MediaCipher.headerBytes + MediaCipher.chunkSize + MediaCipher.chunkOverhead
        #expect(throws: MediaDecryptor.Failure.truncated(received: Int64(boundary))) {
            _ = try decrypt(Array(blob[0..<boundary]), key: media.key, piece: 4096)
        }
        var flipped = blob
        flipped[boundary + 10] ^= 0x01
        #expect(throws: MediaDecryptor.Failure.corrupt(chunk: 1)) {
            _ = try decrypt(flipped, key: media.key, piece: 4096)
        }
        // A byte more: the short final chunk no longer authenticates; after a full final chunk, it is trailing.
        #expect(throws: MediaDecryptor.Failure.corrupt(chunk: 2)) {
            _ = try decrypt(blob + [0], key: media.key, piece: 4096)
        }
        let (_, whole, wholeMedia) = try encrypted(2 * MediaCipher.chunkSize)
        #expect(throws: MediaDecryptor.Failure.trailingBytes) {
            _ = try decrypt(whole + [0], key: wholeMedia.key, piece: 4096)
        }
        let otherKey = try MediaCipher.makeKey()
        #expect(throws: MediaDecryptor.Failure.corrupt(chunk: 0)) {
            _ = try decrypt(blob, key: otherKey, piece: 4096)
        }
    }

    @Test func theDecryptorHoldsOneChunkAtATime() throws {
        let (_, blob, media) = try encrypted(5 * 65_536)
        var decryptor = try MediaDecryptor(key: media.key)
        var largest = 0
        try blob.withUnsafeBytes { bytes in
            try decryptor.take(bytes) { largest = max(largest, $0.count) }
        }
        _ = try decryptor.finish { largest = max(largest, $0.count) }
        #expect(largest == MediaCipher.chunkSize)
    }
}

@Suite struct PlaintextAttachmentTests {
    static let key = Base64.encode([UInt8](repeating: 7, count: 32))
    static let sha = String(repeating: "ab", count: 32)

    func message(_ attachments: String) throws -> Plaintext {
        try Plaintext(
            Array(
                #"{"type":"message","from":"sip:alice@example.org","text":"Look","attachments":\#(attachments)}"#.utf8))
    }

    /// One attachment, `fields` (`,"name":value`) replacing or adding members.
    func attachment(_ fields: String) throws -> String {
        var object: JSONObject = [
            "content_type": "image/jpeg", "name": "lunch.jpg", "size": 1234, "url": "https://files.example.org/files/x",
            "key": .string(Self.key), "sha256": .string(Self.sha),
        ]
        if !fields.isEmpty, let extra = try JSON.parse("{" + fields.dropFirst() + "}").objectValue {
            for (name, value) in extra { object[name] = value }
        }
        return "[" + JSON.object(object).serialized() + "]"
    }

    @Test func aMessageCarriesItsAttachments() throws {
        guard case .message(let message) = try message(try attachment(#","duration":4.5"#)) else {
            Issue.record("not a message")
            return
        }
        #expect(message.attachments.count == 1)
        #expect(message.attachments[0].contentType == "image/jpeg")
        #expect(message.attachments[0].size == 1234)
        #expect(message.attachments[0].duration == 4.5)
    }

    @Test(arguments: [
        (#","size":-1"#, "size"), (#","url":"ftp://x/y""#, "url"), (#","name":"../etc/passwd""#, "name"),
        (#","key":"AAAA""#, "key"), (#","sha256":"xyz""#, "sha256"), (#","content_type":"jpeg""#, "content_type"),
    ])
    func aBadReferenceIsRefusedNamingItsField(fields: String, field: String) {
        // The later member wins in the parser: each case overrides one field.
        do {
            _ = try message(try attachment(fields))
            Issue.record("accepted \(fields)")
        } catch {
            #expect("\(error)".contains("attachments[0].\(field)"), "\(error)")
            #expect(!"\(error)".contains("lunch"))
        }
    }

    @Test func atMostEightAttachments() throws {
        let one = try attachment("").dropFirst().dropLast()
        let nine = "[" + Array(repeating: String(one), count: 9).joined(separator: ",") + "]"
        #expect(throws: PlaintextError.self) { _ = try message(nine) }
    }

    @Test func mimeTypesMapToWhatIOSAttaches() {
        #expect(AttachmentKind.recognize(mimeType: "image/jpeg")?.type == "public.jpeg")
        #expect(AttachmentKind.recognize(mimeType: "Audio/MP4; codecs=aac")?.kind == .audio)
        #expect(AttachmentKind.recognize(mimeType: "video/mp4")?.pathExtension == "mp4")
        #expect(AttachmentKind.recognize(mimeType: "audio/x-matroska") == nil)
        #expect(AttachmentKind.recognize(mimeType: "application/pdf") == nil)
    }

    @Test func mediaURLsSplitForARequest() {
        let plain = MediaURL("http://127.0.0.1:8080/files/abc?x=1#frag")
        #expect(plain?.secure == false)
        #expect(plain?.host == "127.0.0.1")
        #expect(plain?.port == 8080)
        #expect(plain?.target == "/files/abc?x=1")
        #expect(MediaURL("https://[::1]/f")?.host == "::1")
        #expect(MediaURL("https://[::1]/f")?.port == 443)
        #expect(MediaURL("https://[::1]:8443/f")?.hostHeader == "[::1]:8443")
        #expect(MediaURL("https://files.example.org")?.target == "/")
        for bad in [
            "ftp://x/y", "http://", "http://user@host/x", "http://host:0/", "http://host:99999/", "http://a b/",
            "http://\u{FFFD}[::1]:8080/f", "http://[::1/f", "http://[fe80::1%eth0]/f", "http://a:b:c/",
        ] {
            #expect(MediaURL(bad) == nil, "\(bad)")
        }
    }
}

/// The memory iOS gives an extension, by release and iPhone (docs/media.md, "The memory ceiling").
@Suite struct DeviceModelTests {
    @Test func theCeilingFollowsTheReleaseAndTheModel() throws {
        let fiveS = try #require(DeviceModel("iphone-5s"))
        let x = try #require(DeviceModel("iPhone X"))
        #expect(fiveS.name == "iPhone 5s")
        #expect(IOSVersion(major: 12, minor: 5).extensionMemoryLimitKilobytes(on: fiveS) == 12 * 1024)
        #expect(IOSVersion(major: 14).extensionMemoryLimitKilobytes(on: x) == 16 * 1024)
        #expect(IOSVersion(major: 16).extensionMemoryLimitKilobytes(on: x) == 24 * 1024)
        #expect(IOSVersion.current.extensionMemoryLimitKilobytes(on: nil) == 24 * 1024)
        #expect(DeviceModel("Nokia 3310") == nil)
        #expect(fiveS.conflict(with: .current) != nil)
        #expect(x.conflict(with: IOSVersion(major: 13)) == nil)
    }

    @Test func deviceJSONKeepsTheModelAndRefusesOneThatCannotRunItsRelease() throws {
        var config = DeviceConfig(
            bundleID: "org.example.app", teamID: "ABCDE12345", locale: "en", filtering: false, remoteToken: "a",
            voipToken: "b", publicKey: "c", keyID: "d", createdAt: "2026-11-27T00:00:00Z")
        config.iosVersion = IOSVersion(major: 12, minor: 5)
        config.model = DeviceModel("iPhone 5s")
        let read = try DeviceConfig(json: config.json, path: "device.json")
        #expect(read.model?.name == "iPhone 5s")
        config.iosVersion = .current
        #expect(throws: DeviceError.self) { _ = try DeviceConfig(json: config.json, path: "device.json") }
    }
}
