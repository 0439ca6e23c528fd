public import NIOCore
import NSECrypto
public import NSEPayload
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// One attachment of a message, fetched as a secure messenger's extension fetches it: downloaded, every encrypted
/// byte hashed and decrypted as it arrives, the plaintext written to a file beside the request's other scratch
/// files; at most one 64 KiB chunk (and the network's buffer) in memory, whatever the file's size. The file is then
/// the extension's to hand over as a `UNNotificationAttachment`, which the host checks as iOS does.
public final class AttachmentFetch: Sendable {
    /// A file ready to attach.
    public struct Fetched: Sendable, Equatable {
        public var path: String
        /// The uniform type identifier iOS knows the file by (`public.jpeg`).
        public var type: String
        public var kind: AttachmentKind
        public var size: Int64
    }

    private let download: MediaDownload?
    private let outcome: Outcome

    /// What the loop thread built, read once the download ended.
    private final class Sink: @unchecked Sendable {
        var decryptor: MediaDecryptor
        let file: Int32
        var written: Int64 = 0

        init(decryptor: consuming MediaDecryptor, file: Int32) {
            self.decryptor = decryptor
            self.file = file
        }
    }

    private enum Outcome: Sendable {
        case started(EventLoopFuture<Int64>, Sink, path: String, type: (String, AttachmentKind))
        case refused(AttachmentFailure)
    }

    /// Starts fetching `attachment` (message index `index`) into `folder` on `group`'s loop.
    public init(
        _ attachment: Plaintext.Attachment, index: Int, into folder: String, group: any EventLoopGroup,
        caFile: String?
    ) {
        guard let (type, kind, suffix) = AttachmentKind.recognize(mimeType: attachment.contentType) else {
            (download, outcome) = (
                nil, .refused(AttachmentFailure(.attachmentUnsupported, "a type iOS does not attach"))
            )
            return
        }
        guard let url = MediaURL(attachment.url) else {
            (download, outcome) = (nil, .refused(AttachmentFailure(.attachmentUnavailable, "not an http or https URL")))
            return
        }
        guard let key = Self.decodeKey(attachment.key), let decryptor = try? MediaDecryptor(key: key) else {
            (download, outcome) = (nil, .refused(AttachmentFailure(.attachmentCorrupt, "its key is not a 32-byte key")))
            return
        }
        let path = Path.join(folder, "\(index)-attachment.\(suffix)")
        try? FileSystem.createDirectory(folder)
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else {
            (download, outcome) = (
                nil, .refused(AttachmentFailure(.attachmentUnavailable, "its file cannot be written (errno \(errno))"))
            )
            return
        }
        let sink = Sink(decryptor: decryptor, file: file)
        let download = MediaDownload(
            url: url, group: group, caFile: caFile,
            maximumBytes: MediaCipher.ciphertextSize(plaintextSize: attachment.size)
        ) { buffer in
            try buffer.withUnsafeReadableBytes { bytes in
                try sink.decryptor.take(bytes) { plaintext in try Self.write(plaintext, to: sink) }
            }
        }
        self.download = download
        outcome = .started(download.result, sink, path: path, type: (type, kind))
    }

    /// Stops the download (the expiry notice came).
    public func cancel() { download?.cancel() }

    /// Blocks until the fetch ends: the file, or why there is none (and then no file is left behind).
    public func wait(expectedSHA256: String) -> Result<Fetched, AttachmentFailure> {
        switch outcome {
        case .refused(let failure):
            return .failure(failure)
        case .started(let future, let sink, let path, let (type, kind)):
            let result = Result { try future.wait() }
            let finished: Result<Fetched, AttachmentFailure> = result.mapError(Self.failure).flatMap { _ in
                do {
                    let digest = try sink.decryptor.finish { try Self.write($0, to: sink) }
                    guard Hex.encode(digest) == expectedSHA256.lowercased() else {
                        return .failure(
                            AttachmentFailure(
                                .attachmentHashMismatch,
                                "the encrypted file's SHA-256 is not the one its message names"))
                    }
                    return .success(Fetched(path: path, type: type, kind: kind, size: sink.written))
                } catch {
                    return .failure(Self.failure(error))
                }
            }
            close(sink.file)
            if case .failure = finished { unlink(path) }
            return finished
        }
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, to sink: Sink) throws {
        if let failure = FileSystem.writeFully(fd: sink.file, bytes) {
            throw AttachmentFailure(.attachmentUnavailable, "writing its file: errno \(failure.errnoCode)")
        }
        sink.written += Int64(bytes.count)
    }

    private static func failure(_ error: any Error) -> AttachmentFailure {
        switch error {
        case let failure as AttachmentFailure:
            return failure
        case let failure as MediaDecryptor.Failure:
            return AttachmentFailure(.attachmentCorrupt, failure.description)
        case MediaDownload.Failure.cancelled:
            return AttachmentFailure(.attachmentTimedOut, "time ran out during the download")
        case MediaDownload.Failure.tooLarge(let limit):
            return AttachmentFailure(
                .attachmentTooLarge, "the file is larger than the \(limit) bytes its message announced")
        case MediaDownload.Failure.refused(let why):
            return AttachmentFailure(.attachmentCorrupt, why)
        case let failure as MediaDownload.Failure:
            return AttachmentFailure(.attachmentUnavailable, failure.description)
        default:
            return AttachmentFailure(.attachmentUnavailable, "\(type(of: error))")
        }
    }

    /// Standard base64 of 32 bytes.
    static func decodeKey(_ text: String) -> [UInt8]? {
        guard let bytes = Base64.decode(text), bytes.count == MediaCipher.keyBytes else { return nil }
        return bytes
    }
}

/// Why an attachment is not shown: a reason code and words that name no byte, name or URL of the file.
public struct AttachmentFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ReasonCode
    public var detail: String

    public init(_ code: ReasonCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
