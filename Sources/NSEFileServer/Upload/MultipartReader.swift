#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `multipart/form-data` (RFC 7578 over RFC 2046 §5.1) read as it arrives, chunk by chunk, so a form of 50 MB is
/// never held whole: each ``feed(_:)`` returns what the chunk completed (a part's headers, its content so far, its
/// end), keeping back only the few bytes that could be the start of a boundary split across chunks.
struct MultipartReader {
    enum Event: Equatable {
        case partBegan(PartHeaders)
        case content([UInt8])
        case partEnded
    }

    /// Why a body is not a well-formed form.
    struct Malformed: Error, Equatable {
        var detail: String
    }

    private enum State {
        /// Before the first boundary (the preamble, ignored).
        case preamble
        /// After a boundary: `--` (the last one) or the rest of its line.
        case boundaryLine
        case headers
        case content
        /// After the last boundary (the epilogue, ignored).
        case epilogue
    }

    /// The most a part's headers may take.
    static let maxHeaderBytes = 16 * 1024
    /// The most spaces and tabs a boundary line may have after the boundary (RFC 2046's transport padding).
    static let maxPadding = 256

    private static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let blankLine: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]

    /// CRLF, `--` and the boundary: what ends a part's content.
    private let delimiter: [UInt8]
    private var pending: [UInt8]
    private var state = State.preamble

    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        // Read as if the body began with CRLF, a boundary at its very start looks like every other one.
        pending = Self.crlf
    }

    /// Whether the last boundary has come.
    var isComplete: Bool { state == .epilogue }

    /// Reads the next bytes of the body.
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Malformed) -> [Event] {
        pending.append(contentsOf: bytes)
        var events: [Event] = []
        var cursor = 0
        defer { pending.removeSubrange(0..<cursor) }
        reading: while true {
            switch state {
            case .preamble:
                guard let found = find(delimiter, from: cursor) else {
                    cursor = max(cursor, pending.count - (delimiter.count - 1))
                    break reading
                }
                cursor = found + delimiter.count
                state = .boundaryLine
            case .boundaryLine:
                guard pending.count - cursor >= 2 else { break reading }
                if pending[cursor] == UInt8(ascii: "-") && pending[cursor + 1] == UInt8(ascii: "-") {
                    cursor = pending.count
                    state = .epilogue
                    break reading
                }
                guard let end = find(Self.crlf, from: cursor) else {
                    if pending.count - cursor > Self.maxPadding {
                        throw Malformed(detail: "a boundary line runs on without its CRLF")
                    }
                    break reading
                }
                guard pending[cursor..<end].allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) else {
                    throw Malformed(detail: "a boundary is followed by other text on its line")
                }
                cursor = end + 2
                state = .headers
            case .headers:
                guard pending.count - cursor >= 2 else { break reading }
                if pending[cursor] == 0x0D && pending[cursor + 1] == 0x0A {
                    // A part without headers.
                    events.append(.partBegan(PartHeaders()))
                    cursor += 2
                    state = .content
                    continue reading
                }
                guard let end = find(Self.blankLine, from: cursor), end - cursor <= Self.maxHeaderBytes else {
                    if pending.count - cursor > Self.maxHeaderBytes {
                        throw Malformed(detail: "a part's headers are longer than \(Self.maxHeaderBytes) bytes")
                    }
                    break reading
                }
                events.append(.partBegan(PartHeaders(pending[cursor..<end])))
                cursor = end + 4
                state = .content
            case .content:
                if let found = find(delimiter, from: cursor) {
                    if found > cursor { events.append(.content(Array(pending[cursor..<found]))) }
                    events.append(.partEnded)
                    cursor = found + delimiter.count
                    state = .boundaryLine
                } else {
                    // What could be the start of a boundary waits for the next chunk.
                    let safe = pending.count - (delimiter.count - 1)
                    if safe > cursor {
                        events.append(.content(Array(pending[cursor..<safe])))
                        cursor = safe
                    }
                    break reading
                }
            case .epilogue:
                cursor = pending.count
                break reading
            }
        }
        return events
    }

    /// The body has ended: it must have ended with the last boundary.
    func finish() throws(Malformed) {
        guard state == .epilogue else {
            throw Malformed(
                detail: state == .preamble ? "no boundary in the body" : "the body ends before the form's last boundary"
            )
        }
    }

    /// Where `needle` first starts in `pending` at or after `start`: a `memchr` for its first byte, then a compare.
    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        let last = pending.count - needle.count
        guard start <= last else { return nil }
        return pending.withUnsafeBufferPointer { haystack -> Int? in
            guard let base = haystack.baseAddress else { return nil }
            var index = start
            while index <= last {
                guard let hit = memchr(base + index, Int32(needle[0]), last - index + 1) else { return nil }
                index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if needle.withUnsafeBufferPointer({ memcmp(base + index, $0.baseAddress!, needle.count) == 0 }) {
                    return index
                }
                index += 1
            }
            return nil
        }
    }
}

/// The headers of one part of a form: its `Content-Disposition` name and file name, and its `Content-Type`.
struct PartHeaders: Equatable {
    var name: String?
    var filename: String?
    var contentType: String?

    init(name: String? = nil, filename: String? = nil, contentType: String? = nil) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
    }

    /// From the header lines (CRLF between them, none at the end); a line folded onto the next is joined to it.
    init(_ bytes: ArraySlice<UInt8>) {
        var lines: [String] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: true) {
            if let first = line.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1] += " " + line.drop { $0 == " " || $0 == "\t" }
            } else {
                lines.append(String(line))
            }
        }
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = String(line[line.index(after: colon)...])
            switch line[..<colon].lowercased() {
            case "content-disposition":
                let disposition = HeaderParameters(value)
                name = disposition["name"]
                filename = disposition["filename"]
            case "content-type":
                contentType = HeaderParameters(value).value
            default:
                break
            }
        }
    }

    /// Whether this part carries the file: liblinphone names its part `File`, and a part with a file name is one.
    var isFile: Bool { name == "File" || filename != nil }
}
