// The core types, named as Apple names them (`UTType.jpeg`, `.mpeg4Movie`, …); each is declared in `CoreTypes`.
extension UTType {
    // MARK: Abstract and base types

    /// A base type for most things: files, folders (`public.item`).
    public static var item: UTType { UTType(declared: "public.item") }

    /// A base type for anything holding user-viewable document content (`public.content`).
    public static var content: UTType { UTType(declared: "public.content") }

    /// Content of mixed embedded kinds, compound documents (`public.composite-content`).
    public static var compositeContent: UTType { UTType(declared: "public.composite-content") }

    /// A base type for any byte stream, files and in-memory data (`public.data`).
    public static var data: UTType { UTType(declared: "public.data") }

    /// An archive of files and folders (`public.archive`).
    public static var archive: UTType { UTType(declared: "public.archive") }

    /// A URL (`public.url`).
    public static var url: UTType { UTType(declared: "public.url") }

    /// A URL to a file (`public.file-url`).
    public static var fileURL: UTType { UTType(declared: "public.file-url") }

    // MARK: Text

    /// A base type for text, including text with markup (`public.text`).
    public static var text: UTType { UTType(declared: "public.text") }

    /// Text with no markup, in an unspecified encoding (`public.plain-text`).
    public static var plainText: UTType { UTType(declared: "public.plain-text") }

    /// Plain text in UTF-8 (`public.utf8-plain-text`).
    public static var utf8PlainText: UTType { UTType(declared: "public.utf8-plain-text") }

    /// Text holding delimited values (`public.delimited-values-text`).
    public static var delimitedText: UTType { UTType(declared: "public.delimited-values-text") }

    /// Text holding comma-separated values, `.csv` (`public.comma-separated-values-text`).
    public static var commaSeparatedText: UTType { UTType(declared: "public.comma-separated-values-text") }

    /// Rich Text Format (`public.rtf`).
    public static var rtf: UTType { UTType(declared: "public.rtf") }

    /// HTML, any version (`public.html`).
    public static var html: UTType { UTType(declared: "public.html") }

    /// Generic XML (`public.xml`).
    public static var xml: UTType { UTType(declared: "public.xml") }

    /// JSON (`public.json`).
    public static var json: UTType { UTType(declared: "public.json") }

    // MARK: Documents

    /// A PDF document (`com.adobe.pdf`).
    public static var pdf: UTType { UTType(declared: "com.adobe.pdf") }

    // MARK: Images

    /// A base type for images (`public.image`).
    public static var image: UTType { UTType(declared: "public.image") }

    /// A JPEG image (`public.jpeg`).
    public static var jpeg: UTType { UTType(declared: "public.jpeg") }

    /// A PNG image (`public.png`).
    public static var png: UTType { UTType(declared: "public.png") }

    /// A GIF image (`com.compuserve.gif`).
    public static var gif: UTType { UTType(declared: "com.compuserve.gif") }

    /// A TIFF image (`public.tiff`).
    public static var tiff: UTType { UTType(declared: "public.tiff") }

    /// A Windows bitmap (`com.microsoft.bmp`).
    public static var bmp: UTType { UTType(declared: "com.microsoft.bmp") }

    /// A Windows icon (`com.microsoft.ico`).
    public static var ico: UTType { UTType(declared: "com.microsoft.ico") }

    /// A Scalable Vector Graphics image (`public.svg-image`).
    public static var svg: UTType { UTType(declared: "public.svg-image") }

    /// A High Efficiency Image File Format image (`public.heif`).
    public static var heif: UTType { UTType(declared: "public.heif") }

    /// A High Efficiency Image Coding image (`public.heic`).
    public static var heic: UTType { UTType(declared: "public.heic") }

    /// A WebP image (`org.webmproject.webp`).
    public static var webP: UTType { UTType(declared: "org.webmproject.webp") }

    // MARK: Audio and movies

    /// Any audio or video content (`public.audiovisual-content`).
    public static var audiovisualContent: UTType { UTType(declared: "public.audiovisual-content") }

    /// A format that may hold video and audio: what people call a movie (`public.movie`).
    public static var movie: UTType { UTType(declared: "public.movie") }

    /// Video with no audio (`public.video`).
    public static var video: UTType { UTType(declared: "public.video") }

    /// Audio with no video (`public.audio`).
    public static var audio: UTType { UTType(declared: "public.audio") }

    /// A QuickTime movie (`com.apple.quicktime-movie`).
    public static var quickTimeMovie: UTType { UTType(declared: "com.apple.quicktime-movie") }

    /// An MPEG-1 or MPEG-2 movie (`public.mpeg`).
    public static var mpeg: UTType { UTType(declared: "public.mpeg") }

    /// MPEG-2 video (`public.mpeg-2-video`).
    public static var mpeg2Video: UTType { UTType(declared: "public.mpeg-2-video") }

    /// An MPEG-4 movie (`public.mpeg-4`).
    public static var mpeg4Movie: UTType { UTType(declared: "public.mpeg-4") }

    /// An AVI movie (`public.avi`).
    public static var avi: UTType { UTType(declared: "public.avi") }

    /// MP3 audio (`public.mp3`).
    public static var mp3: UTType { UTType(declared: "public.mp3") }

    /// MPEG-4 audio (`public.mpeg-4-audio`).
    public static var mpeg4Audio: UTType { UTType(declared: "public.mpeg-4-audio") }

    /// AIFF audio (`public.aiff-audio`).
    public static var aiff: UTType { UTType(declared: "public.aiff-audio") }

    /// Waveform audio, `.wav` (`com.microsoft.waveform-audio`).
    public static var wav: UTType { UTType(declared: "com.microsoft.waveform-audio") }

    /// MIDI audio (`public.midi-audio`).
    public static var midi: UTType { UTType(declared: "public.midi-audio") }

    // MARK: Archives

    /// A zip archive (`public.zip-archive`).
    public static var zip: UTType { UTType(declared: "public.zip-archive") }

    /// A gzip archive (`org.gnu.gnu-zip-archive`).
    public static var gzip: UTType { UTType(declared: "org.gnu.gnu-zip-archive") }
}

extension UTType {
    /// A type of `CoreTypes`, by its identifier as declared there.
    fileprivate init(declared identifier: String) {
        self.init(exportedAs: identifier)
    }
}
