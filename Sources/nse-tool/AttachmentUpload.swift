import NSECommandLine
import NSECrypto
import NSEHTTP
import NSEJSON
import NSEPayload
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// What `--attach FILE` does for `nse seal` and `nse send`, as a messenger's app sends a photo: the file encrypted
/// under a key of its own (docs/media.md), uploaded to the file server (`nse files`, `POST /files`), and the
/// reference put into the message (docs/envelope.md, "Attachments").
struct AttachmentUpload {
    /// The file server's base URL (`http://127.0.0.1:8080`).
    var server: String
    var caFile: String?

    /// The MIME type by filename extension, as a sending app labels a file; `application/octet-stream` otherwise.
    static let mimeTypes: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "heic": "image/heic",
        "webp": "image/webp", "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav",
        "aif": "audio/aiff", "aiff": "audio/aiff", "ogg": "audio/ogg", "opus": "audio/ogg", "mka": "audio/x-matroska",
        "mp4": "video/mp4", "mov": "video/quicktime", "avi": "video/x-msvideo", "mpg": "video/mpeg",
        "mpeg": "video/mpeg", "pdf": "application/pdf", "txt": "text/plain",
    ]

    /// Encrypts and uploads `path`; the message's reference to it.
    func upload(_ path: String) throws(Failure) -> Plaintext.Attachment {
        guard FileSystem.exists(path), !FileSystem.isDirectory(path) else {
            throw Failure(.noInput, "--attach \(path): no such file")
        }
        let staging = Path.join(
            Environment.get("TMPDIR") ?? "/tmp",
            "nse-attach-\(getpid())-\(Hex.encode(Digest.sha256(Array(path.utf8)).prefix(6)))")
        defer { try? FileSystem.remove(staging) }
        let encrypted: EncryptedMedia
        do { encrypted = try MediaCipher.encryptFile(at: path, to: staging) } catch {
            throw Failure(.ioError, "--attach \(path): \(error)")
        }
        let blob: [UInt8]
        do {
            guard let bytes = try FileSystem.readFile(staging, limit: Int(Plaintext.Attachment.maximumSize)) else {
                throw Failure(.rejected, "--attach \(path): larger than 1 GiB")
            }
            blob = bytes
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(.ioError, "--attach \(path): \(error)")
        }
        let base = server.hasSuffix("/") ? String(server.dropLast()) : server
        let request = HTTPRequest(
            method: "POST", url: base + "/files", headers: ["Content-Type": "application/octet-stream"], body: blob,
            timeout: 120, tls: HTTPTLSOptions(caFilePath: caFile))
        let response: HTTPResponse
        do { response = try HTTPClient(maxResponseBodyBytes: 64 << 10).send(request) } catch {
            throw Failure(.unavailable, "--attach \(path): the file server: \(error)")
        }
        guard response.status == 201 else {
            throw Failure(.unavailable, "--attach \(path): the file server answered \(response.status), not 201")
        }
        guard let answer = (try? JSON.parse(response.body))?.objectValue, let url = answer["url"]?.stringValue else {
            throw Failure(.unavailable, "--attach \(path): the file server's answer has no \"url\"")
        }
        let sha256 = Hex.encode(encrypted.sha256)
        if let stored = answer["sha256"]?.stringValue, stored.lowercased() != sha256 {
            throw Failure(.unavailable, "--attach \(path): the file server stored other bytes than were sent (SHA-256)")
        }
        let suffix = Path.fileExtension(path).lowercased()
        return Plaintext.Attachment(
            contentType: Self.mimeTypes[suffix] ?? "application/octet-stream", name: Path.basename(path),
            size: encrypted.plaintextSize, url: url, key: Base64.encode(encrypted.key), sha256: sha256)
    }

    /// The plaintext document with the references appended to its `attachments`.
    static func adding(_ attachments: [Plaintext.Attachment], to document: [UInt8]) throws(Failure) -> [UInt8] {
        guard var object = (try? JSON.parse(document))?.objectValue else {
            throw Failure(.rejected, "stdin: the plaintext is not a JSON object")
        }
        guard object["type"]?.stringValue == "message" else {
            throw Failure(.usage, "--attach: only a message (\"type\":\"message\") carries attachments")
        }
        let existing = object["attachments"]?.arrayValue ?? []
        object["attachments"] = .array(existing + attachments.map(\.json))
        return JSON.object(object).serializedBytes()
    }
}
