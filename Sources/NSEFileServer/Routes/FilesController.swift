import Hummingbird
import Logging
import NIOCore
import NIOPosix
import NSEJSON
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file-transfer API: `POST /files` stores a file and answers 201 with its URL once it is on disk; `GET` and
/// `HEAD /files/{id}` serve it, with ranges, and with the faults the plan has for it (docs/files.md).
struct FilesController: Sendable {
    let store: BlobStore
    let faults: FileFaultPlan
    /// The largest file stored (`--max-size`).
    let maxSize: Int
    /// `http` or `https`, for the URL of an upload.
    let scheme: String
    /// The listener's `host:port` (IPv6 in brackets), for a URL when the request names no host.
    let fallbackAuthority: @Sendable () -> String
    /// The server giving up on the answers still going.
    let stopping: Occurrence
    let logger: Logger

    var endpoints: RouteCollection<FilesRequestContext> {
        RouteCollection(context: FilesRequestContext.self)
            .post(use: upload)
            .get(":id", use: download)
            .head(":id", use: download)
    }

    // MARK: - Upload

    @Sendable func upload(_ request: Request, context: FilesRequestContext) async -> Response {
        let form: UploadForm
        do { form = try UploadForm(contentType: request.headers[.contentType]) } catch {
            return Answers.error(.badRequest, "BadUpload", error.detail)
        }
        let announced = request.headers[.contentLength].flatMap(Int.init)
        if let announced {
            if announced > form.bodyLimit(maxSize: maxSize) { return tooLarge }
            if announced == 0, form == .raw { return Response(status: .noContent) }
        }
        let upload: PendingUpload
        do {
            upload = try await NIOThreadPool.singleton.runIfActive { [store] in try store.begin() }
        } catch {
            return storageFailure(error, "upload not begun")
        }
        let stored: PendingUpload.Stored
        do {
            try await UploadReader(form: form, maxSize: maxSize).read(
                request.body, into: upload, announced: announced, channel: context.channel
            ) { received in context.logged?.update { $0.bytesReceived = received } }
            stored = try await upload.commit()
        } catch {
            await upload.discard()
            return refused(error)
        }
        context.logged?.update { $0.file = stored.id }
        let url = "\(scheme)://\(authority(request))/files/\(stored.id)"
        var headers = HTTPFields()
        headers[.location] = url
        return Answers.json(
            ["url": .string(url), "size": .int(Int64(stored.size)), "sha256": .string(stored.sha256)],
            status: .created, headers: headers)
    }

    /// The answer to an upload that was not stored.
    private func refused(_ error: any Error) -> Response {
        switch error {
        case UploadReader.Refusal.tooLarge: tooLarge
        case UploadReader.Refusal.badForm(let detail): Answers.error(.badRequest, "BadUpload", detail)
        case UploadReader.Refusal.empty: Response(status: .noContent)
        case UploadReader.Refusal.incomplete, is CancellationError: Answers.error(.badRequest, "IncompleteUpload")
        default: storageFailure(error, "upload not stored")
        }
    }

    private var tooLarge: Response {
        Answers.error(.contentTooLarge, "TooLarge", "files are limited to \(maxSize) bytes")
    }

    /// 507 when the disk is full, else 500; the cause goes to the log, not to the client.
    private func storageFailure(_ error: any Error, _ message: Logger.Message) -> Response {
        logger.error(message, metadata: ["files.error": .string("\(error)")])
        if let failure = error as? SystemError, failure.errnoCode == ENOSPC || failure.errnoCode == EDQUOT {
            return Answers.error(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "StorageFull")
        }
        return Answers.error(.internalServerError, "StorageFailed")
    }

    /// The host and port the client used (`Host`, `:authority`) when it is a plain one, else the listener's.
    private func authority(_ request: Request) -> String {
        guard let given = request.head.authority, !given.isEmpty, given.utf8.count <= 255,
            given.unicodeScalars.allSatisfy({
                $0.properties.isASCIIHexDigit || ("a"..."z").contains($0) || ("A"..."Z").contains($0)
                    || ".-:[]".unicodeScalars.contains($0)
            })
        else { return fallbackAuthority() }
        return given
    }

    // MARK: - Download

    @Sendable func download(_ request: Request, context: FilesRequestContext) async -> Response {
        let id = context.parameters.get("id") ?? ""
        guard BlobID.isValid(id) else { return Answers.notFound }
        let blob: StoredBlob?
        do { blob = try await NIOThreadPool.singleton.runIfActive { [store] in try store.lookUp(id) } } catch {
            return storageFailure(error, "stored file not opened")
        }
        guard let blob else { return Answers.notFound }
        context.logged?.update { $0.file = id }
        let head = request.method == .head
        let applied = faults.take(file: id, head: head)
        if !applied.names.isEmpty { context.logged?.update { $0.faults = applied.names } }
        if let delay = applied.delay {
            let closed = Occurrence()
            context.channel.closeFuture.whenComplete { _ in closed.signal() }
            let due = ContinuousClock.now + .nanoseconds(Int64(delay * 1e9))
            guard await Occurrence.sleep(until: due, unless: [stopping, closed]) else {
                return Answers.error(.serviceUnavailable, "Stopping")
            }
        }
        if applied.notFound { return Answers.notFound }

        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.acceptRanges] = "bytes"
        headers[.eTag] = "\"\(blob.sha256)\""
        // If-Range with another validator than this file's ETag: the whole file (RFC 9110 §13.1.5).
        let ifRange = request.headers[.ifRange]
        let range =
            ifRange == nil || ifRange == headers[.eTag]
            ? RangeRequest(header: request.headers[.range], size: blob.size) : .whole
        let status: HTTPResponse.Status
        let (offset, length): (Int, Int)
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(blob.size)"
            return Answers.error(.rangeNotSatisfiable, "RangeNotSatisfiable", headers: headers)
        case .whole:
            (status, offset, length) = (.ok, 0, blob.size)
        case .part(let start, let count):
            (status, offset, length) = (.partialContent, start, count)
            headers[.contentRange] = "bytes \(start)-\(start + count - 1)/\(blob.size)"
        }
        headers[.contentLength] = String(length)
        guard !head else { return Response(status: status, headers: headers) }
        let body = DownloadBody(
            blob: blob, offset: offset, length: length, faults: applied, channel: context.channel,
            http1: context.httpVersion == "1.1", stopping: stopping)
        return Response(status: status, headers: headers, body: body.response)
    }
}
