/// What the header of an encoded image says: its format, its size in pixels as stored, and how it is to be turned for
/// display. Read without decoding any pixel, from the formats iOS reads: PNG, JPEG, GIF, WebP, HEIF (HEIC, AVIF), BMP
/// and TIFF. Anything else, or a header that is cut short or inconsistent, is not an image.
///
/// iOS, too, makes a `UIImage` from the header and leaves decoding for when the image is drawn; so data whose header is
/// sound but whose pixels are cut short is an image here as there.
struct ImageHeader: Equatable, Sendable {
    enum Format: Equatable, Sendable {
        case png, jpeg, gif, webP, heif, bmp, tiff
    }

    let format: Format
    /// The size of the stored pixels, before `orientation` is applied.
    let pixelWidth: Int
    let pixelHeight: Int
    /// How the stored pixels are turned for display: a JPEG's or TIFF's EXIF orientation, a HEIF image's rotation.
    let orientation: UIImage.Orientation

    init?(format: Format, pixelWidth: Int, pixelHeight: Int, orientation: UIImage.Orientation = .up) {
        guard pixelWidth > 0, pixelHeight > 0 else { return nil }
        self.format = format
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.orientation = orientation
    }

    /// The header of `data`, or `nil` if `data` is not an image of a format read here.
    init?(_ data: Data) {
        let bytes = ByteReader(data)
        let header =
            Self.png(bytes) ?? Self.jpeg(bytes) ?? Self.gif(bytes) ?? Self.webP(bytes) ?? Self.heif(bytes)
            ?? Self.bmp(bytes) ?? Self.tiff(bytes)
        guard let header else { return nil }
        self = header
    }

    /// The size in pixels as displayed: width and height swapped when the image is turned a quarter.
    var displayedPixelSize: (width: Int, height: Int) {
        switch orientation {
        case .left, .right, .leftMirrored, .rightMirrored: (pixelHeight, pixelWidth)
        case .up, .down, .upMirrored, .downMirrored: (pixelWidth, pixelHeight)
        }
    }

    /// The UIImage orientation of an EXIF orientation (1–8; TIFF tag 274).
    static func orientation(exif value: Int) -> UIImage.Orientation {
        switch value {
        case 2: .upMirrored
        case 3: .down
        case 4: .downMirrored
        case 5: .leftMirrored
        case 6: .right
        case 7: .rightMirrored
        case 8: .left
        default: .up
        }
    }

    // MARK: - PNG

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A PNG image: the signature, then an IHDR chunk of 13 bytes with a sound bit depth and colour type and a
    /// matching CRC (a PNG reader stops at a critical chunk whose CRC is wrong).
    private static func png(_ bytes: ByteReader) -> ImageHeader? {
        guard bytes.starts(with: pngSignature), bytes.uint32BE(at: 8) == 13, bytes.matches("IHDR", at: 12),
            let width = bytes.uint32BE(at: 16), let height = bytes.uint32BE(at: 20),
            let bitDepth = bytes.uint8(at: 24), let colorType = bytes.uint8(at: 25),
            let chunk = bytes.slice(12, count: 17), let crc = bytes.uint32BE(at: 29), CRC32.checksum(chunk) == crc
        else { return nil }
        let bitDepths: [UInt8: Set<UInt8>] = [
            0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
        ]
        guard bitDepths[colorType]?.contains(bitDepth) == true, width <= Int32.max, height <= Int32.max else {
            return nil
        }
        return ImageHeader(format: .png, pixelWidth: Int(width), pixelHeight: Int(height))
    }

    // MARK: - GIF

    /// A GIF image: the signature, the logical screen, and a first image descriptor after the colour table and any
    /// extensions (a GIF with no frame has no image to show). Its size is the logical screen's, or the first frame's
    /// if the screen's is zero.
    private static func gif(_ bytes: ByteReader) -> ImageHeader? {
        guard bytes.matches("GIF87a", at: 0) || bytes.matches("GIF89a", at: 0),
            let screenWidth = bytes.uint16LE(at: 6), let screenHeight = bytes.uint16LE(at: 8),
            let packed = bytes.uint8(at: 10)
        else { return nil }
        var offset = 13
        if packed & 0x80 != 0 { offset += 3 << (Int(packed & 0x07) + 1) }
        while let introducer = bytes.uint8(at: offset) {
            switch introducer {
            case 0x2C:  // Image descriptor: left, top, width, height, packed.
                guard let frameWidth = bytes.uint16LE(at: offset + 5), let frameHeight = bytes.uint16LE(at: offset + 7)
                else { return nil }
                let useScreen = screenWidth > 0 && screenHeight > 0
                return ImageHeader(
                    format: .gif, pixelWidth: Int(useScreen ? screenWidth : frameWidth),
                    pixelHeight: Int(useScreen ? screenHeight : frameHeight))
            case 0x21:  // Extension: a label, then data sub-blocks up to an empty one.
                offset += 2
                while let length = bytes.uint8(at: offset), length > 0 { offset += 1 + Int(length) }
                guard bytes.uint8(at: offset) != nil else { return nil }
                offset += 1
            default:  // The trailer (0x3B) before any frame, or not a GIF block.
                return nil
            }
        }
        return nil
    }

    // MARK: - WebP

    /// A WebP image: a RIFF `WEBP` file whose first chunk is a lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`)
    /// bitstream header.
    private static func webP(_ bytes: ByteReader) -> ImageHeader? {
        guard bytes.matches("RIFF", at: 0), bytes.matches("WEBP", at: 8) else { return nil }
        let chunk = 20
        if bytes.matches("VP8 ", at: 12) {
            guard bytes.slice(chunk + 3, count: 3) == [0x9D, 0x01, 0x2A], let width = bytes.uint16LE(at: chunk + 6),
                let height = bytes.uint16LE(at: chunk + 8)
            else { return nil }
            return ImageHeader(format: .webP, pixelWidth: Int(width & 0x3FFF), pixelHeight: Int(height & 0x3FFF))
        }
        if bytes.matches("VP8L", at: 12) {
            guard bytes.uint8(at: chunk) == 0x2F, let bits = bytes.uint32LE(at: chunk + 1) else { return nil }
            return ImageHeader(
                format: .webP, pixelWidth: Int(bits & 0x3FFF) + 1, pixelHeight: Int(bits >> 14 & 0x3FFF) + 1)
        }
        if bytes.matches("VP8X", at: 12) {
            guard let width = bytes.uint24LE(at: chunk + 4), let height = bytes.uint24LE(at: chunk + 7) else {
                return nil
            }
            return ImageHeader(format: .webP, pixelWidth: width + 1, pixelHeight: height + 1)
        }
        return nil
    }

    // MARK: - BMP

    /// A Windows bitmap: `BM`, then an OS/2 core header (16-bit sizes) or a Windows info header (32-bit sizes, a
    /// negative height meaning rows stored top-down).
    private static func bmp(_ bytes: ByteReader) -> ImageHeader? {
        guard bytes.matches("BM", at: 0), let headerSize = bytes.uint32LE(at: 14) else { return nil }
        if headerSize == 12 {
            guard let width = bytes.uint16LE(at: 18), let height = bytes.uint16LE(at: 20) else { return nil }
            return ImageHeader(format: .bmp, pixelWidth: Int(width), pixelHeight: Int(height))
        }
        guard headerSize >= 40, let width = bytes.uint32LE(at: 18), let height = bytes.uint32LE(at: 22) else {
            return nil
        }
        return ImageHeader(
            format: .bmp, pixelWidth: Int(Int32(bitPattern: width)), pixelHeight: abs(Int(Int32(bitPattern: height))))
    }

    // MARK: - TIFF

    /// A TIFF image: the size and orientation of its first image (IFD 0).
    private static func tiff(_ bytes: ByteReader) -> ImageHeader? {
        guard let ifd = TIFFDirectory(bytes, at: 0), let width = ifd.value(of: 256), let height = ifd.value(of: 257)
        else { return nil }
        return ImageHeader(
            format: .tiff, pixelWidth: width, pixelHeight: height,
            orientation: orientation(exif: ifd.value(of: 274) ?? 1))
    }
}
