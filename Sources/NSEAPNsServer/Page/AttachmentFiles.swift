import Hummingbird
import NIOCore
import NIOPosix
import NSEDevice
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `GET /v1/devices/{token}/attachments/{request}/{file}`: one file of a device's attachment store
/// (`DIR/attachments/<request_id>/`, where the host moves a notification's attachments and avatars), for the
/// lock-screen page's thumbnails and avatars.
///
/// Confined to that folder: `request` and `file` are single names (percent-decoded, then refused when empty, hidden,
/// `.`/`..`, or holding a `/`, a NUL or a control character), opened one component at a time with `O_NOFOLLOW` under
/// the device's `attachments` folder (a symbolic link anywhere on the way is refused, so is a hard-linked file), and
/// served only when it is a regular file. Anything else, an unknown token included, is the server's usual 404
/// `BadPath`: the answer does not tell a missing file from a refused one. The type is read from the file's first
/// bytes, never from its name (`application/octet-stream` when unknown), with `nosniff` and `no-store`.
enum AttachmentFiles {
    /// Bytes read per system call; the first read also gives the type.
    static let chunkBytes = 64 * 1024

    /// The page's URL for a file the result names (`attachments[].path`, `communication.avatar_path`): its
    /// folder and name under `attachments/` as `/v1/devices/{token}/attachments/{request}/{file}`, percent-encoded;
    /// `nil` when the path is not `…/attachments/<request>/<file>` with names the route serves. The script builds
    /// the same URL from the same rule (``LockScreenAssets``).
    static func url(token: String, storedPath: String) -> String? {
        let parts = storedPath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[parts.count - 3] == "attachments" else { return nil }
        let request = String(parts[parts.count - 2])
        let file = String(parts[parts.count - 1])
        guard isServable(request), isServable(file) else { return nil }
        return "/v1/devices/\(percentEncoded(token))/attachments/\(percentEncoded(request))/\(percentEncoded(file))"
    }

    /// A name the route may open: one path component, not hidden, no control characters, at most 255 bytes.
    static func isServable(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255, !name.hasPrefix(".") else { return false }
        return !name.unicodeScalars.contains { $0 == "/" || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters (what the script's
    /// `encodeURIComponent` gives once `!'()*` are encoded too).
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(hex[Int(byte >> 4)])
                encoded.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return encoded
    }

    /// A path parameter as the router hands it (still percent-encoded), decoded; `nil` for a malformed escape or
    /// bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The media type of a file from its first bytes: the images iOS attaches (PNG, JPEG, GIF, HEIC/HEIF, AVIF,
    /// WebP), and the usual audio and movie containers; `application/octet-stream` for anything else (SVG and HTML
    /// included: nothing a browser would run).
    static func contentType(_ head: [UInt8]) -> String {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
        }
        func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return "image/gif" }
        if starts(ascii("RIFF")) {
            if starts(ascii("WEBP"), at: 8) { return "image/webp" }
            if starts(ascii("WAVE"), at: 8) { return "audio/wav" }
            if starts(ascii("AVI "), at: 8) { return "video/x-msvideo" }
        }
        if starts(ascii("FORM")), starts(ascii("AIFF"), at: 8) || starts(ascii("AIFC"), at: 8) { return "audio/aiff" }
        if starts(ascii("ftyp"), at: 4), head.count >= 12 {
            switch String(decoding: head[8..<12], as: UTF8.self) {
            case "heic", "heix", "hevc", "hevx", "heim", "heis": return "image/heic"
            case "mif1", "msf1": return "image/heif"
            case "avif", "avis": return "image/avif"
            case "qt  ": return "video/quicktime"
            case "M4A ", "M4B ": return "audio/mp4"
            case "3gp4", "3gp5", "3gp6", "3g2a": return "video/3gpp"
            case "isom", "iso2", "mp41", "mp42", "avc1", "M4V ", "dash": return "video/mp4"
            default: break
            }
        }
        if starts(ascii("ID3")) || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0) {
            return "audio/mpeg"
        }
        return "application/octet-stream"
    }

    /// An open descriptor, closed when the last reference goes: also when the body that would have read it is
    /// dropped unread (a HEAD, a client gone before the body).
    final class OpenFile: Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }

        /// Up to `count` bytes from `offset`; fewer only at the end of the file.
        func read(at offset: Int, count: Int) throws(SystemError) -> [UInt8] {
            try FileSystem.readBytes(fd: fd, at: offset, count: count)
        }
    }

    /// `request`/`file` under `directory`'s attachment store, opened without following a link; `nil` unless it is
    /// a regular file with one link.
    static func openStored(in directory: String, request: String, file: String) -> (file: OpenFile, size: Int)? {
        guard isServable(request), isServable(file) else { return nil }
        let store = open(Path.join(directory, "attachments"), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard store >= 0 else { return nil }
        defer { close(store) }
        let folder = openat(store, request, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { return nil }
        defer { close(folder) }
        // O_NONBLOCK: a FIFO put there would otherwise block the open until a writer comes.
        let fd = openat(folder, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let opened = OpenFile(fd)
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else { return nil }
        return (opened, Int(info.st_size))
    }

    /// The answer to `GET /v1/devices/{token}/attachments/{request}/{file}`; the parameters as routed.
    static func respond(token: String, request: String, file: String, service: PushService) async -> Response {
        guard let device = service.device(for: token), let request = percentDecoded(request),
            let file = percentDecoded(file)
        else { return notFound }
        let directory = device.directory
        // Opening and the first read wait for the disk: on a thread of the pool, not on an event loop.
        let opened = try? await NIOThreadPool.singleton.runIfActive { () throws -> (OpenFile, Int, [UInt8])? in
            guard let (handle, size) = openStored(in: directory, request: request, file: file) else { return nil }
            return (handle, size, try handle.read(at: 0, count: min(size, chunkBytes)))
        }
        guard let (handle, size, head) = opened, head.count == min(size, chunkBytes) else { return notFound }
        var fields = HTTPFields()
        fields[.contentType] = contentType(head)
        fields[.cacheControl] = "no-store"
        fields[.init("x-content-type-options")!] = "nosniff"
        // Opened as a page, the file may do nothing at all.
        fields[.init("content-security-policy")!] = "default-src 'none'; sandbox"
        guard size > head.count else {
            return Response(status: .ok, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: head)))
        }
        // A larger file (a movie is up to 50 MB) goes a chunk at a time from the descriptor opened above. A file
        // cut shorter meanwhile ends the answer early, which the client sees as an error.
        let body = ResponseBody(contentLength: size) { writer in
            try await writer.write(ByteBuffer(bytes: head))
            var offset = head.count
            while offset < size {
                let chunk = try await NIOThreadPool.singleton.runIfActive { [offset] in
                    try handle.read(at: offset, count: min(size - offset, chunkBytes))
                }
                guard !chunk.isEmpty else { throw SystemError(errnoCode: EIO, operation: "read", path: file) }
                try await writer.write(ByteBuffer(bytes: chunk))
                offset += chunk.count
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: fields, body: body)
    }

    private static var notFound: Response { PushResponder.error(.badPath, apnsID: nil) }
}
