/// An image, as a notification service extension uses one: made from downloaded data or a file to check that the data
/// is an image of a format iOS reads, and to learn its size.
///
/// The image is known by its header (`ImageHeader`): PNG, JPEG, GIF, WebP, HEIF (HEIC, AVIF), BMP and TIFF are
/// recognized and sized; other data makes no image (`init?(data:)` is `nil`), as data iOS cannot read does. No pixel is
/// decoded: what needs pixels (drawing, `cgImage`, `jpegData(compressionQuality:)`, `pngData()`) is not here.
open class UIImage: NSObject, @unchecked Sendable {
    // Sendable: every stored property is a constant of a Sendable type, as UIImage is immutable on iOS.

    private let header: ImageHeader?
    private let imageScale: CGFloat

    /// An empty image: size zero, scale 1.
    public override init() {
        header = nil
        imageScale = 1
        super.init()
    }

    /// The image encoded in `data`, at scale 1, or `nil` if `data` is not an image of a format iOS reads.
    public init?(data: Data) {
        guard let header = ImageHeader(data) else { return nil }
        self.header = header
        imageScale = 1
        super.init()
    }

    /// The image encoded in `data`, at `scale` pixels a point (a scale that is not a positive number is taken as 1),
    /// or `nil` if `data` is not an image of a format iOS reads.
    public init?(data: Data, scale: CGFloat) {
        guard let header = ImageHeader(data) else { return nil }
        self.header = header
        imageScale = scale > 0 && scale.isFinite ? scale : 1
        super.init()
    }

    /// The image in the file at `path`, or `nil` if the file cannot be read or is not an image. A name with the `@2x`
    /// or `@3x` modifier (`photo@2x.png`, `photo@3x~iphone.png`) gives scale 2 or 3, else the scale is 1.
    public init?(contentsOfFile path: String) {
        guard let data = FileManager.default.contents(atPath: path), let header = ImageHeader(data) else { return nil }
        self.header = header
        imageScale = Self.scale(ofFileNamed: (path as NSString).lastPathComponent)
        super.init()
    }

    /// The size in points: the pixels as displayed (turned by `imageOrientation`) divided by `scale`.
    open var size: CGSize {
        guard let header else { return .zero }
        let pixels = header.displayedPixelSize
        return CGSize(width: CGFloat(pixels.width) / imageScale, height: CGFloat(pixels.height) / imageScale)
    }

    /// Pixels a point: 1, the scale given to `init?(data:scale:)`, or the file name's `@2x`/`@3x`.
    open var scale: CGFloat { imageScale }

    /// How the stored pixels are turned for display: from a JPEG's or TIFF's EXIF orientation or a HEIF image's
    /// rotation; `.up` for other formats.
    open var imageOrientation: UIImage.Orientation { header?.orientation ?? .up }

    private static func scale(ofFileNamed name: String) -> CGFloat {
        var base = (name as NSString).deletingPathExtension
        // A device modifier (`~iphone`, `~ipad`) comes after the scale modifier.
        if let tilde = base.lastIndex(of: "~") { base = String(base[..<tilde]) }
        if base.hasSuffix("@3x") { return 3 }
        if base.hasSuffix("@2x") { return 2 }
        return 1
    }
}

extension UIImage {
    /// How an image's stored pixels are turned for display, as EXIF orientations 1–8 describe it.
    public enum Orientation: Int, Sendable {
        /// As stored (EXIF 1).
        case up = 0
        /// Turned 180° (EXIF 3).
        case down = 1
        /// Turned 90° anticlockwise (EXIF 8).
        case left = 2
        /// Turned 90° clockwise (EXIF 6).
        case right = 3
        /// Mirrored left to right (EXIF 2).
        case upMirrored = 4
        /// Mirrored top to bottom (EXIF 4).
        case downMirrored = 5
        /// Mirrored across the top-left to bottom-right diagonal (EXIF 5).
        case leftMirrored = 6
        /// Mirrored across the top-right to bottom-left diagonal (EXIF 7).
        case rightMirrored = 7
    }
}
