import Hummingbird
import NIOCore

/// Reads an upload's body into its ``PendingUpload``: the bytes themselves, or a form's file part, refusing what is
/// too large, malformed or cut short.
struct UploadReader {
    let form: UploadForm
    /// The largest file (`--max-size`).
    let maxSize: Int

    /// Why a body is not stored.
    enum Refusal: Error, Equatable {
        /// Over `--max-size` (413).
        case tooLarge
        /// Not a well-formed form, or one without a file part (400).
        case badForm(String)
        /// The body did not come whole: the client went, or the connection was closed under it (400).
        case incomplete
        /// No bytes and no form: liblinphone's opening POST, which Flexisip's server answers 204.
        case empty
    }

    /// Reads `body` to its end.
    /// - Parameters:
    ///   - announced: the request's `Content-Length`, if any.
    ///   - progress: told the bytes received so far, after each chunk.
    /// - Throws: a ``Refusal``, or the `SystemError` of a write.
    func read(
        _ body: RequestBody, into upload: PendingUpload, announced: Int?, channel: any Channel,
        progress: (Int) -> Void
    ) async throws {
        let limit = form.bodyLimit(maxSize: maxSize)
        var reader: MultipartReader?
        if case .multipart(let boundary) = form { reader = MultipartReader(boundary: boundary) }
        // A form's file part: not yet seen (nil), being read (true), read (false). Raw bytes are all the file.
        var filePart: Bool? = reader == nil ? true : nil
        var received = 0
        var chunks = body.makeAsyncIterator()
        while true {
            let next: ByteBuffer?
            do { next = try await chunks.next() } catch { throw Refusal.incomplete }
            guard let buffer = next else { break }
            received += buffer.readableBytes
            progress(received)
            guard received <= limit else { throw Refusal.tooLarge }
            guard var form = reader else {
                try await upload.append(buffer.readableBytesView)
                continue
            }
            let events: [MultipartReader.Event]
            do { events = try form.feed(buffer.readableBytesView) } catch { throw Refusal.badForm(error.detail) }
            reader = form
            for event in events {
                switch event {
                case .partBegan(let headers) where filePart == nil && headers.isFile: filePart = true
                case .content(let bytes) where filePart == true: try await upload.append(bytes)
                case .partEnded where filePart == true: filePart = false
                default: break
                }
            }
            guard upload.size <= maxSize else { throw Refusal.tooLarge }
        }
        // Hummingbird ends a body whose connection closed under it as if it were whole: a body is whole only if its
        // connection is still there, and its length came when one was announced.
        guard channel.isActive, !Task.isCancelled, announced == nil || announced == received else {
            throw Refusal.incomplete
        }
        if let reader {
            do { try reader.finish() } catch { throw Refusal.badForm(error.detail) }
            guard filePart != nil else {
                throw Refusal.badForm("the form has no file part (named File, or with a filename)")
            }
        } else if received == 0 {
            throw Refusal.empty
        }
    }
}
