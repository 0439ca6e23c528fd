extension ImageHeader {
    /// A JPEG image: the start-of-image marker, then segments up to the first start-of-frame (SOF0–SOF15 but DHT,
    /// JPG and DAC), which holds the size. An APP1 `Exif` segment before it gives the orientation. A scan or the end
    /// of the image before any frame header is not an image.
    static func jpeg(_ bytes: ByteReader) -> ImageHeader? {
        guard bytes.uint8(at: 0) == 0xFF, bytes.uint8(at: 1) == 0xD8 else { return nil }
        var offset = 2
        var orientation = UIImage.Orientation.up
        while true {
            guard bytes.uint8(at: offset) == 0xFF else { return nil }
            // Any number of 0xFF fill bytes may come before a marker.
            while bytes.uint8(at: offset) == 0xFF { offset += 1 }
            guard let marker = bytes.uint8(at: offset) else { return nil }
            offset += 1
            switch marker {
            case 0x01, 0xD0...0xD7:  // TEM and RSTn stand alone.
                continue
            case 0xD8, 0xD9, 0xDA:  // A second SOI, the end, or a scan before any frame header.
                return nil
            default:
                break
            }
            guard let length = bytes.uint16BE(at: offset), length >= 2 else { return nil }
            let segment = offset + 2
            if Self.isStartOfFrame(marker) {
                guard let height = bytes.uint16BE(at: segment + 1), let width = bytes.uint16BE(at: segment + 3) else {
                    return nil
                }
                return ImageHeader(
                    format: .jpeg, pixelWidth: Int(width), pixelHeight: Int(height), orientation: orientation)
            }
            if marker == 0xE1, bytes.matches("Exif\0\0", at: segment),
                let exif = bytes.slice(segment + 6, count: Int(length) - 8),
                let ifd = TIFFDirectory(ByteReader(Data(exif)), at: 0), let value = ifd.value(of: 274)
            {
                orientation = Self.orientation(exif: value)
            }
            offset += Int(length)
        }
    }

    private static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}
