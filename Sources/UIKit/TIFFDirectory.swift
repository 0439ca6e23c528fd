/// The first image file directory (IFD 0) of a TIFF structure, as found in a TIFF file and in a JPEG's EXIF segment:
/// the byte order (`II` little-endian, `MM` big-endian), the magic number 42, the directory's offset, then its entries
/// of 12 bytes. Only SHORT and LONG values held in the entry itself are read, which is what the size and orientation
/// tags are.
struct TIFFDirectory {
    private let bytes: ByteReader
    private let littleEndian: Bool
    private let entries: Int
    private let entryCount: Int

    /// The IFD 0 of the TIFF structure at `start`, or `nil` if there is none or its entries are cut short.
    init?(_ bytes: ByteReader, at start: Int) {
        let littleEndian: Bool
        if bytes.matches("II", at: start) {
            littleEndian = true
        } else if bytes.matches("MM", at: start) {
            littleEndian = false
        } else {
            return nil
        }
        guard bytes.uint16(at: start + 2, littleEndian: littleEndian) == 42,
            let offset = bytes.uint32(at: start + 4, littleEndian: littleEndian), offset >= 8,
            let count = bytes.uint16(at: start + Int(offset), littleEndian: littleEndian)
        else { return nil }
        let entries = start + Int(offset) + 2
        guard count == 0 || bytes.uint8(at: entries + Int(count) * 12 - 1) != nil else { return nil }
        self.bytes = bytes
        self.littleEndian = littleEndian
        self.entries = entries
        self.entryCount = Int(count)
    }

    /// The value of `tag` if the directory has it as a single SHORT or LONG.
    func value(of tag: Int) -> Int? {
        for index in 0..<entryCount {
            let entry = entries + index * 12
            guard bytes.uint16(at: entry, littleEndian: littleEndian).map(Int.init) == tag else { continue }
            guard bytes.uint32(at: entry + 4, littleEndian: littleEndian) == 1 else { return nil }
            switch bytes.uint16(at: entry + 2, littleEndian: littleEndian) {
            case 3: return bytes.uint16(at: entry + 8, littleEndian: littleEndian).map(Int.init)
            case 4: return bytes.uint32(at: entry + 8, littleEndian: littleEndian).map(Int.init)
            default: return nil
            }
        }
        return nil
    }
}
