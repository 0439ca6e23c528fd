/// What a download's `Range` header asks of a file of `size` bytes (RFC 9110 §14): the whole file, one part of it,
/// or nothing it has.
///
/// One range of bytes is served as asked: `bytes=a-b` (b past the end is the end), `bytes=a-`, `bytes=-n` (the last n
/// bytes, the whole file when n is larger). Anything else is answered with the whole file, as RFC 9110 lets a server
/// ignore `Range`: another unit, a malformed header, `b < a`, and several ranges (`bytes=0-9,20-29`: no
/// multipart/byteranges answer).
enum RangeRequest: Equatable {
    case whole
    /// `length` bytes from `offset`, at least one, all within the file.
    case part(offset: Int, length: Int)
    /// A range that starts past the end (or any range of an empty file): 416.
    case unsatisfiable

    init(header: String?, size: Int) {
        guard let header else {
            self = .whole
            return
        }
        let text = header.trimmingBlanks
        guard text.utf8.count > 6, text.prefix(6).lowercased() == "bytes=" else {
            self = .whole
            return
        }
        let specs = text.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
        guard specs.count == 1 else {
            self = .whole
            return
        }
        let spec = String(specs[0]).trimmingBlanks
        guard let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // bytes=-n: the last n bytes.
            guard let count = Self.number(last) else {
                self = .whole
                return
            }
            guard count > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .part(offset: size - min(count, size), length: min(count, size))
            return
        }
        guard let start = Self.number(first) else {
            self = .whole
            return
        }
        var end = size - 1
        if !last.isEmpty {
            guard let given = Self.number(last), given >= start else {
                self = .whole
                return
            }
            end = min(given, size - 1)
        }
        guard start < size else {
            self = .unsatisfiable
            return
        }
        self = .part(offset: start, length: end - start + 1)
    }

    /// ASCII digits, at least one; a number too large for an `Int` is `Int.max` (past any file's end).
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text) ?? Int.max
    }
}
