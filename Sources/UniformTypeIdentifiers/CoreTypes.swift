/// A type the system declares: its identifier, the types it directly conforms to, and its tags (the first of each kind
/// is the preferred one).
struct TypeDeclaration: Sendable {
    let identifier: String
    let conformsTo: [String]
    let filenameExtensions: [String]
    let mimeTypes: [String]
    let description: String

    init(
        _ identifier: String, conformsTo: [String], extensions: [String] = [], mimeTypes: [String] = [],
        description: String
    ) {
        self.identifier = identifier
        self.conformsTo = conformsTo
        self.filenameExtensions = extensions
        self.mimeTypes = mimeTypes
        self.description = description
    }

    func tags(of tagClass: UTTagClass) -> [String] {
        switch tagClass {
        case .filenameExtension: filenameExtensions
        case .mimeType: mimeTypes
        default: []
        }
    }
}

/// The types the system declares, as iOS declares them, for the types an app extension meets: images, audio, movies,
/// text, documents and archives, with the abstract types above them (`public.data`, `public.content`, …).
///
/// Identifiers and conformances are those of Apple's headers (UTCoreTypes.h, whose comments give each type's UTI and
/// what it conforms to); intermediate types those headers name but Swift does not (`public.heif-standard`,
/// `public.aifc-audio`, `com.pkware.zip-archive`) are declared too, so the conformance tree has no gaps. The extensions
/// and MIME types are the system's as far as they are known here, the preferred one first (`public.jpeg` prefers
/// `jpeg`, as `UTTypeCopyPreferredTagWithClass` answers on iOS); `com.apple.m4a-audio` and `com.apple.m4v-video` are
/// declared so that `m4a` and `m4v` resolve to the types iOS gives them (AVFoundation's `AVFileType.m4a`, `.m4v`).
/// Descriptions are English, close to what the system shows; iOS localizes them.
enum CoreTypes {
    static let declarations: [TypeDeclaration] = [
        // Abstract and base types.
        .init("public.item", conformsTo: [], description: "item"),
        .init("public.content", conformsTo: [], description: "content"),
        .init("public.composite-content", conformsTo: ["public.content"], description: "composite content"),
        .init("public.data", conformsTo: ["public.item"], description: "data"),
        .init("public.archive", conformsTo: [], description: "archive"),
        .init("public.url", conformsTo: ["public.data"], description: "URL"),
        .init("public.file-url", conformsTo: ["public.url"], description: "file URL"),

        // Text.
        .init("public.text", conformsTo: ["public.data", "public.content"], description: "text"),
        .init(
            "public.plain-text", conformsTo: ["public.text"], extensions: ["txt", "text"], mimeTypes: ["text/plain"],
            description: "plain text"),
        .init(
            "public.utf8-plain-text", conformsTo: ["public.plain-text"], mimeTypes: ["text/plain;charset=utf-8"],
            description: "UTF-8 plain text"),
        .init("public.delimited-values-text", conformsTo: ["public.text"], description: "delimited values text"),
        .init(
            "public.comma-separated-values-text", conformsTo: ["public.delimited-values-text"], extensions: ["csv"],
            mimeTypes: ["text/csv", "text/comma-separated-values"], description: "comma-separated values"),
        .init(
            "public.rtf", conformsTo: ["public.text"], extensions: ["rtf"], mimeTypes: ["text/rtf", "application/rtf"],
            description: "rich text document"),
        .init(
            "public.html", conformsTo: ["public.text"], extensions: ["html", "htm", "shtml", "shtm"],
            mimeTypes: ["text/html"], description: "HTML text"),
        .init(
            "public.xml", conformsTo: ["public.text"], extensions: ["xml"], mimeTypes: ["application/xml", "text/xml"],
            description: "XML text"),
        .init(
            "public.json", conformsTo: ["public.text"], extensions: ["json"], mimeTypes: ["application/json"],
            description: "JSON"),

        // Documents.
        .init(
            "com.adobe.pdf", conformsTo: ["public.data", "public.composite-content"], extensions: ["pdf"],
            mimeTypes: ["application/pdf"], description: "PDF document"),

        // Images.
        .init("public.image", conformsTo: ["public.data", "public.content"], description: "image"),
        .init(
            "public.jpeg", conformsTo: ["public.image"], extensions: ["jpeg", "jpg", "jpe"],
            mimeTypes: ["image/jpeg", "image/jpg"], description: "JPEG image"),
        .init(
            "public.png", conformsTo: ["public.image"], extensions: ["png"], mimeTypes: ["image/png"],
            description: "PNG image"),
        .init(
            "com.compuserve.gif", conformsTo: ["public.image"], extensions: ["gif"], mimeTypes: ["image/gif"],
            description: "GIF image"),
        .init(
            "public.tiff", conformsTo: ["public.image"], extensions: ["tiff", "tif"], mimeTypes: ["image/tiff"],
            description: "TIFF image"),
        .init(
            "com.microsoft.bmp", conformsTo: ["public.image"], extensions: ["bmp", "dib"], mimeTypes: ["image/bmp"],
            description: "Windows BMP image"),
        .init(
            "com.microsoft.ico", conformsTo: ["public.image"], extensions: ["ico"],
            mimeTypes: ["image/vnd.microsoft.icon", "image/x-icon"], description: "Windows icon image"),
        .init(
            "public.svg-image", conformsTo: ["public.image"], extensions: ["svg"], mimeTypes: ["image/svg+xml"],
            description: "SVG image"),
        .init("public.heif-standard", conformsTo: ["public.image"], description: "HEIF image"),
        .init(
            "public.heic", conformsTo: ["public.heif-standard"], extensions: ["heic"], mimeTypes: ["image/heic"],
            description: "HEIC image"),
        .init(
            "public.heif", conformsTo: ["public.heif-standard"], extensions: ["heif"], mimeTypes: ["image/heif"],
            description: "HEIF image"),
        .init(
            "org.webmproject.webp", conformsTo: ["public.image"], extensions: ["webp"], mimeTypes: ["image/webp"],
            description: "WebP image"),

        // Audio and movies.
        .init(
            "public.audiovisual-content", conformsTo: ["public.data", "public.content"],
            description: "audiovisual content"),
        .init("public.movie", conformsTo: ["public.audiovisual-content"], description: "movie"),
        .init("public.video", conformsTo: ["public.movie"], description: "video"),
        .init("public.audio", conformsTo: ["public.audiovisual-content"], description: "audio"),
        .init(
            "com.apple.quicktime-movie", conformsTo: ["public.movie"], extensions: ["mov", "qt"],
            mimeTypes: ["video/quicktime"], description: "QuickTime movie"),
        .init(
            "public.mpeg", conformsTo: ["public.movie"], extensions: ["mpg", "mpeg", "m75", "m15"],
            mimeTypes: ["video/mpeg", "video/mpg", "video/x-mpeg", "video/x-mpg"], description: "MPEG movie"),
        .init(
            "public.mpeg-2-video", conformsTo: ["public.video"], extensions: ["m2v"], mimeTypes: ["video/mpeg2"],
            description: "MPEG-2 video"),
        .init(
            "public.mpeg-4", conformsTo: ["public.movie"], extensions: ["mp4", "mpg4"],
            mimeTypes: ["video/mp4", "video/mp4v"], description: "MPEG-4 movie"),
        .init(
            "com.apple.m4v-video", conformsTo: ["public.mpeg-4"], extensions: ["m4v"], mimeTypes: ["video/x-m4v"],
            description: "Apple MPEG-4 movie"),
        .init(
            "public.avi", conformsTo: ["public.movie"], extensions: ["avi", "vfw"],
            mimeTypes: ["video/avi", "video/msvideo", "video/x-msvideo"], description: "AVI movie"),
        .init(
            "public.mp3", conformsTo: ["public.audio"], extensions: ["mp3"],
            mimeTypes: [
                "audio/mpeg", "audio/mpeg3", "audio/mpg", "audio/mp3", "audio/x-mpeg3", "audio/x-mpeg", "audio/x-mp3",
                "audio/x-mpg",
            ],
            description: "MP3 audio"),
        .init(
            "public.mpeg-4-audio", conformsTo: ["public.mpeg-4", "public.audio"], extensions: ["m4a"],
            mimeTypes: ["audio/mp4"], description: "MPEG-4 audio"),
        .init(
            "com.apple.m4a-audio", conformsTo: ["public.mpeg-4-audio"], extensions: ["m4a"],
            mimeTypes: ["audio/x-m4a", "audio/m4a"], description: "Apple MPEG-4 audio"),
        .init(
            "public.aifc-audio", conformsTo: ["public.audio"], extensions: ["aifc"], mimeTypes: ["audio/x-aifc"],
            description: "AIFF-C audio"),
        .init(
            "public.aiff-audio", conformsTo: ["public.aifc-audio"], extensions: ["aiff", "aif"],
            mimeTypes: ["audio/aiff", "audio/x-aiff"], description: "AIFF audio"),
        .init(
            "com.microsoft.waveform-audio", conformsTo: ["public.audio"], extensions: ["wav", "wave"],
            mimeTypes: ["audio/wav", "audio/wave", "audio/x-wav", "audio/vnd.wave"], description: "Waveform audio"),
        .init(
            "public.midi-audio", conformsTo: ["public.audio"], extensions: ["mid", "midi", "smf", "kar"],
            mimeTypes: ["audio/midi", "audio/x-midi"], description: "MIDI audio"),

        // Archives.
        .init(
            "com.pkware.zip-archive", conformsTo: ["public.data", "public.archive"], extensions: ["zip"],
            mimeTypes: ["application/zip"], description: "ZIP archive"),
        .init(
            "public.zip-archive", conformsTo: ["com.pkware.zip-archive"], extensions: ["zip"],
            mimeTypes: ["application/zip", "application/x-zip-compressed"], description: "ZIP archive"),
        .init(
            "org.gnu.gnu-zip-archive", conformsTo: ["public.data", "public.archive"], extensions: ["gz", "gzip"],
            mimeTypes: ["application/x-gzip", "application/gzip"], description: "gzip archive"),
    ]

    /// Declarations by lowercased identifier: identifiers compare without regard to case.
    static let byIdentifier: [String: TypeDeclaration] = Dictionary(
        declarations.map { (lowercased($0.identifier), $0) }, uniquingKeysWith: { first, _ in first })

    /// Declarations by tag class, then by lowercased tag, in table order: extensions and MIME types compare without
    /// regard to case (`photo.JPG` is a JPEG image).
    private static let byTag: [UTTagClass: [String: [TypeDeclaration]]] = {
        var index: [UTTagClass: [String: [TypeDeclaration]]] = [:]
        for tagClass in [UTTagClass.filenameExtension, .mimeType] {
            var byTag: [String: [TypeDeclaration]] = [:]
            for declaration in declarations {
                for tag in declaration.tags(of: tagClass) { byTag[lowercased(tag), default: []].append(declaration) }
            }
            index[tagClass] = byTag
        }
        return index
    }()

    static func declaration(_ identifier: String) -> TypeDeclaration? {
        byIdentifier[lowercased(identifier)]
    }

    /// The declared types that have `tag` in `tagClass`, in table order.
    static func declarations(tag: String, tagClass: UTTagClass) -> [TypeDeclaration] {
        byTag[tagClass]?[lowercased(tag)] ?? []
    }

    /// The types `identifier` directly conforms to: a declared type's, or what a dynamic identifier encodes.
    static func directSupertypes(of identifier: String) -> [String] {
        if let declaration = declaration(identifier) { return declaration.conformsTo }
        if let dynamic = DynamicType(identifier: identifier), let supertype = dynamic.conformsTo { return [supertype] }
        return []
    }

    /// Every type `identifiers` conform to, directly or not, without repeats, nearest first.
    static func closure(of identifiers: [String]) -> [String] {
        var seen: Set<String> = []
        var result: [String] = []
        var queue = identifiers[...]
        while let identifier = queue.popFirst() {
            guard seen.insert(lowercased(identifier)).inserted else { continue }
            result.append(identifier)
            queue.append(contentsOf: directSupertypes(of: identifier))
        }
        return result
    }

    /// `text` with A–Z lowercased and every other character kept: identifiers, extensions and MIME types are ASCII
    /// case-insensitive, and a Unicode lowercasing could make a foreign tag equal to a known one.
    static func lowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
