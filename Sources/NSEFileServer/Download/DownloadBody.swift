import Hummingbird
import NIOCore
import NIOPosix

/// A download's body: `length` bytes of a stored file from `offset`, read from disk 64 KiB at a time on NIO's thread
/// pool (a file of 50 MB is never in memory), changed by the faults the download took:
///
/// - `slow`: chunks of a tenth of the rate, each sent when the rate allows (the first at once);
/// - `wrong-hash`: the file's first and last bytes inverted (XOR 0xFF) wherever they fall in the range;
/// - `truncate`: after that many bytes the connection's output is closed (HTTP/1.1: FIN, after a TLS close_notify
///   over TLS) or the HTTP/2 stream reset, though `Content-Length` promised them all.
///
/// A pause ends early when the client goes or the server gives up on its last answers: the body then stops.
struct DownloadBody: Sendable {
    static let chunkBytes = 64 * 1024

    let blob: StoredBlob
    let offset: Int
    let length: Int
    let faults: FileFaultPlan.Applied
    let channel: any Channel
    /// An HTTP/1.1 connection (else an HTTP/2 stream), whose output a `truncate` fault closes.
    let http1: Bool
    /// The server giving up on the answers still going.
    let stopping: Occurrence

    /// Why a body ended before its end.
    enum Cut: Error {
        case truncated
        case interrupted
        case fileShrank
    }

    var response: ResponseBody {
        ResponseBody(contentLength: length) { writer in try await self.write(to: &writer) }
    }

    private func write(to writer: inout any ResponseBodyWriter) async throws {
        let limit = min(length, faults.truncateAfter ?? length)
        var chunk = Self.chunkBytes
        var interruptions = [stopping]
        if let rate = faults.bytesPerSecond {
            chunk = max(1, min(Self.chunkBytes, rate / 10))
            let closed = Occurrence()
            channel.closeFuture.whenComplete { _ in closed.signal() }
            interruptions.append(closed)
        }
        let start = ContinuousClock.now
        var sent = 0
        while sent < limit {
            let count = min(chunk, limit - sent)
            if let rate = faults.bytesPerSecond, sent > 0 {
                let due = start + .nanoseconds(Int64(Double(sent) / Double(rate) * 1e9))
                guard await Occurrence.sleep(until: due, unless: interruptions) else { throw Cut.interrupted }
            }
            let position = offset + sent
            var bytes = try await NIOThreadPool.singleton.runIfActive { [blob] in
                try blob.read(at: position, count: count)
            }
            guard bytes.count == count else { throw Cut.fileShrank }
            if faults.wrongHash { Self.invertEnds(&bytes, at: position, fileSize: blob.size) }
            try await writer.write(ByteBuffer(bytes: bytes))
            sent += count
        }
        if limit < length {
            // The bytes written so far go out first: NIO closes the output once its pending writes are written.
            if http1 { try? await channel.close(mode: .output).get() }
            throw Cut.truncated
        }
        try await writer.finish(nil)
    }

    /// Inverts the bytes of `bytes` (which start at `position` in the file) that are the file's first or last byte.
    static func invertEnds(_ bytes: inout [UInt8], at position: Int, fileSize: Int) {
        for target in Set([0, fileSize - 1]) where target >= position && target < position + bytes.count {
            bytes[target - position] ^= 0xFF
        }
    }
}
