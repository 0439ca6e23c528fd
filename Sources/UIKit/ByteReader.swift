/// Bounds-checked reads of fixed-width numbers from `Data` at offsets counted from its first byte (a `Data` slice's
/// indices do not start at zero). A read past the end is `nil`, so a header cut short is never read as zeros.
struct ByteReader {
    private let data: Data

    init(_ data: Data) {
        self.data = data
    }

    var count: Int { data.count }

    func uint8(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < data.count else { return nil }
        return data[data.startIndex + offset]
    }

    /// `count` bytes from `offset`, or `nil` if they are not all there.
    func slice(_ offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset <= data.count - count else { return nil }
        let start = data.startIndex + offset
        return Array(data[start..<start + count])
    }

    func starts(with prefix: [UInt8]) -> Bool {
        slice(0, count: prefix.count) == prefix
    }

    /// Whether the ASCII `text` is at `offset`.
    func matches(_ text: String, at offset: Int) -> Bool {
        let expected = Array(text.utf8)
        return slice(offset, count: expected.count) == expected
    }

    func uint16BE(at offset: Int) -> UInt16? { number(at: offset, count: 2, littleEndian: false).map(UInt16.init) }
    func uint16LE(at offset: Int) -> UInt16? { number(at: offset, count: 2, littleEndian: true).map(UInt16.init) }
    func uint24LE(at offset: Int) -> Int? { number(at: offset, count: 3, littleEndian: true).map(Int.init) }
    func uint32BE(at offset: Int) -> UInt32? { number(at: offset, count: 4, littleEndian: false).map(UInt32.init) }
    func uint32LE(at offset: Int) -> UInt32? { number(at: offset, count: 4, littleEndian: true).map(UInt32.init) }
    func uint64BE(at offset: Int) -> UInt64? { number(at: offset, count: 8, littleEndian: false) }

    func uint16(at offset: Int, littleEndian: Bool) -> UInt16? {
        number(at: offset, count: 2, littleEndian: littleEndian).map(UInt16.init)
    }

    func uint32(at offset: Int, littleEndian: Bool) -> UInt32? {
        number(at: offset, count: 4, littleEndian: littleEndian).map(UInt32.init)
    }

    private func number(at offset: Int, count: Int, littleEndian: Bool) -> UInt64? {
        guard let bytes = slice(offset, count: count) else { return nil }
        let ordered = littleEndian ? Array(bytes.reversed()) : bytes
        return ordered.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// The CRC-32 of PNG chunks (ISO 3309, polynomial 0xEDB88320, reflected).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ value >> 1 : value >> 1 }
        return value
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ crc >> 8 }
    }
}
