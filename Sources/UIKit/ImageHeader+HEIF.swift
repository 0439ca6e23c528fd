extension ImageHeader {
    /// The `ftyp` brands of HEIF still images and sequences, HEVC- or AV1-coded (HEIC, AVIF) and generic (`mif1`).
    private static let heifBrands: Set<String> = [
        "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis",
    ]

    /// A HEIF image (ISO/IEC 23008-12; HEIC, AVIF): an ISO base media file whose `ftyp` names a HEIF brand and whose
    /// `meta` box names a primary item (`pitm`) with an image spatial extent (`ispe`) among its properties (`ipco`,
    /// as `ipma` associates them). The primary item is the whole picture: for a photo stored as a grid of tiles it is
    /// the grid, not a tile. Its rotation (`irot`) is the orientation; mirroring (`imir`) is not read.
    static func heif(_ bytes: ByteReader) -> ImageHeader? {
        guard let ftyp = Box(bytes, at: 0, end: bytes.count), ftyp.type == "ftyp", ftyp.end >= ftyp.payload + 8 else {
            return nil
        }
        let brandOffsets = [ftyp.payload] + Array(stride(from: ftyp.payload + 8, to: ftyp.end - 3, by: 4))
        guard brandOffsets.contains(where: { offset in heifBrands.contains { bytes.matches($0, at: offset) } }) else {
            return nil
        }
        var offset = ftyp.end
        while let box = Box(bytes, at: offset, end: bytes.count) {
            if box.type == "meta" { return heifMeta(bytes, box) }
            offset = box.end
        }
        return nil
    }

    private static func heifMeta(_ bytes: ByteReader, _ meta: Box) -> ImageHeader? {
        // `meta` is a full box: a version and flags come before its children.
        let children = Box.children(bytes, from: meta.payload + 4, to: meta.end)
        guard let pitm = children.first(where: { $0.type == "pitm" }), let version = bytes.uint8(at: pitm.payload),
            let primary = version == 0
                ? bytes.uint16BE(at: pitm.payload + 4).map(Int.init)
                : bytes.uint32BE(at: pitm.payload + 4).map(Int.init),
            let iprp = children.first(where: { $0.type == "iprp" })
        else { return nil }
        let iprpChildren = Box.children(bytes, from: iprp.payload, to: iprp.end)
        guard let ipco = iprpChildren.first(where: { $0.type == "ipco" }) else { return nil }
        let properties = Box.children(bytes, from: ipco.payload, to: ipco.end)
        let associated = iprpChildren.filter { $0.type == "ipma" }.flatMap {
            propertyIndices(bytes, ipma: $0, item: primary)
        }
        let primaryProperties = associated.compactMap { index in
            index >= 1 && index <= properties.count ? properties[index - 1] : nil
        }
        guard let ispe = primaryProperties.first(where: { $0.type == "ispe" }),
            let width = bytes.uint32BE(at: ispe.payload + 4), let height = bytes.uint32BE(at: ispe.payload + 8),
            width <= Int32.max, height <= Int32.max
        else { return nil }
        var orientation = UIImage.Orientation.up
        if let irot = primaryProperties.first(where: { $0.type == "irot" }), let angle = bytes.uint8(at: irot.payload) {
            // Anticlockwise quarter turns to apply for display.
            orientation = [.up, .left, .down, .right][Int(angle & 0x03)]
        }
        return ImageHeader(format: .heif, pixelWidth: Int(width), pixelHeight: Int(height), orientation: orientation)
    }

    /// The 1-based `ipco` indices `ipma` associates with `item`.
    private static func propertyIndices(_ bytes: ByteReader, ipma: Box, item: Int) -> [Int] {
        guard let version = bytes.uint8(at: ipma.payload), let flags = bytes.uint8(at: ipma.payload + 3),
            let entryCount = bytes.uint32BE(at: ipma.payload + 4)
        else { return [] }
        let wideIndices = flags & 1 == 1
        var offset = ipma.payload + 8
        for _ in 0..<entryCount {
            let itemID =
                version < 1 ? bytes.uint16BE(at: offset).map(Int.init) : bytes.uint32BE(at: offset).map(Int.init)
            offset += version < 1 ? 2 : 4
            guard let itemID, let count = bytes.uint8(at: offset), offset < ipma.end else { return [] }
            offset += 1
            var indices: [Int] = []
            for _ in 0..<count {
                if wideIndices {
                    guard let value = bytes.uint16BE(at: offset) else { return [] }
                    indices.append(Int(value & 0x7FFF))
                    offset += 2
                } else {
                    guard let value = bytes.uint8(at: offset) else { return [] }
                    indices.append(Int(value & 0x7F))
                    offset += 1
                }
            }
            if itemID == item { return indices }
        }
        return []
    }
}

/// An ISO base media file format box: its four-character type, where its payload starts and where it ends. A box that
/// claims to end past its parent (or the data) is not a box.
struct Box {
    let type: String
    let payload: Int
    let end: Int

    init?(_ bytes: ByteReader, at offset: Int, end limit: Int) {
        guard let size32 = bytes.uint32BE(at: offset), let type = bytes.slice(offset + 4, count: 4) else { return nil }
        var headerSize = 8
        var size = Int(size32)
        if size32 == 1 {  // A 64-bit size follows the type.
            guard let large = bytes.uint64BE(at: offset + 8), large <= UInt64(Int.max) else { return nil }
            size = Int(large)
            headerSize = 16
        } else if size32 == 0 {  // The box runs to the end of its parent.
            size = limit - offset
        }
        guard size >= headerSize, size <= limit - offset else { return nil }
        self.type = String(decoding: type, as: UTF8.self)
        self.payload = offset + headerSize
        self.end = offset + size
    }

    /// The boxes from `start` to `end`, up to the first one that is not sound.
    static func children(_ bytes: ByteReader, from start: Int, to end: Int) -> [Box] {
        var boxes: [Box] = []
        var offset = start
        while offset < end, let box = Box(bytes, at: offset, end: end) {
            boxes.append(box)
            offset = box.end
        }
        return boxes
    }
}
