// The core types' identifiers, as `CFString`: the constants of UTCoreTypes.h (deprecated in iOS 15.0), for the types
// UniformTypeIdentifiers declares (`CoreTypes`). Availability as in that header: iOS deprecations do not warn on Linux.
// `nonisolated(unsafe)`: each is an immutable `NSString` made once from a literal (see UTTagClasses.swift).

// MARK: Abstract and base types

/// `public.item`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeItem instead.")
nonisolated(unsafe) public let kUTTypeItem: CFString = "public.item"

/// `public.content`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeContent instead.")
nonisolated(unsafe) public let kUTTypeContent: CFString = "public.content"

/// `public.composite-content`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeCompositeContent instead.")
nonisolated(unsafe) public let kUTTypeCompositeContent: CFString = "public.composite-content"

/// `public.archive`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeArchive instead.")
nonisolated(unsafe) public let kUTTypeArchive: CFString = "public.archive"

/// `public.data`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeData instead.")
nonisolated(unsafe) public let kUTTypeData: CFString = "public.data"

/// `public.url`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeURL instead.")
nonisolated(unsafe) public let kUTTypeURL: CFString = "public.url"

/// `public.file-url`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeFileURL instead.")
nonisolated(unsafe) public let kUTTypeFileURL: CFString = "public.file-url"

// MARK: Text

/// `public.text`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeText instead.")
nonisolated(unsafe) public let kUTTypeText: CFString = "public.text"

/// `public.plain-text`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypePlainText instead.")
nonisolated(unsafe) public let kUTTypePlainText: CFString = "public.plain-text"

/// `public.utf8-plain-text`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeUTF8PlainText instead.")
nonisolated(unsafe) public let kUTTypeUTF8PlainText: CFString = "public.utf8-plain-text"

/// `public.delimited-values-text`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeDelimitedText instead.")
nonisolated(unsafe) public let kUTTypeDelimitedText: CFString = "public.delimited-values-text"

/// `public.comma-separated-values-text`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeCommaSeparatedText instead.")
nonisolated(unsafe) public let kUTTypeCommaSeparatedText: CFString = "public.comma-separated-values-text"

/// `public.rtf`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeRTF instead.")
nonisolated(unsafe) public let kUTTypeRTF: CFString = "public.rtf"

/// `public.html`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeHTML instead.")
nonisolated(unsafe) public let kUTTypeHTML: CFString = "public.html"

/// `public.xml`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeXML instead.")
nonisolated(unsafe) public let kUTTypeXML: CFString = "public.xml"

/// `public.json`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeJSON instead.")
nonisolated(unsafe) public let kUTTypeJSON: CFString = "public.json"

// MARK: Documents

/// `com.adobe.pdf`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypePDF instead.")
nonisolated(unsafe) public let kUTTypePDF: CFString = "com.adobe.pdf"

// MARK: Images

/// `public.image`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeImage instead.")
nonisolated(unsafe) public let kUTTypeImage: CFString = "public.image"

/// `public.jpeg`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeJPEG instead.")
nonisolated(unsafe) public let kUTTypeJPEG: CFString = "public.jpeg"

/// `public.tiff`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeTIFF instead.")
nonisolated(unsafe) public let kUTTypeTIFF: CFString = "public.tiff"

/// `com.compuserve.gif`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeGIF instead.")
nonisolated(unsafe) public let kUTTypeGIF: CFString = "com.compuserve.gif"

/// `public.png`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypePNG instead.")
nonisolated(unsafe) public let kUTTypePNG: CFString = "public.png"

/// `com.microsoft.bmp`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeBMP instead.")
nonisolated(unsafe) public let kUTTypeBMP: CFString = "com.microsoft.bmp"

/// `com.microsoft.ico`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeICO instead.")
nonisolated(unsafe) public let kUTTypeICO: CFString = "com.microsoft.ico"

/// `public.svg-image`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeSVG instead.")
nonisolated(unsafe) public let kUTTypeScalableVectorGraphics: CFString = "public.svg-image"

// MARK: Audio and movies

/// `public.audiovisual-content`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeAudiovisualContent instead.")
nonisolated(unsafe) public let kUTTypeAudiovisualContent: CFString = "public.audiovisual-content"

/// `public.movie`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeMovie instead.")
nonisolated(unsafe) public let kUTTypeMovie: CFString = "public.movie"

/// `public.video`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeVideo instead.")
nonisolated(unsafe) public let kUTTypeVideo: CFString = "public.video"

/// `public.audio`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeAudio instead.")
nonisolated(unsafe) public let kUTTypeAudio: CFString = "public.audio"

/// `com.apple.quicktime-movie`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeQuickTimeMovie instead.")
nonisolated(unsafe) public let kUTTypeQuickTimeMovie: CFString = "com.apple.quicktime-movie"

/// `public.mpeg`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeMPEG instead.")
nonisolated(unsafe) public let kUTTypeMPEG: CFString = "public.mpeg"

/// `public.mpeg-2-video`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeMPEG2Video instead.")
nonisolated(unsafe) public let kUTTypeMPEG2Video: CFString = "public.mpeg-2-video"

/// `public.mp3`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeMP3 instead.")
nonisolated(unsafe) public let kUTTypeMP3: CFString = "public.mp3"

/// `public.mpeg-4`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeMPEG4Movie instead.")
nonisolated(unsafe) public let kUTTypeMPEG4: CFString = "public.mpeg-4"

/// `public.mpeg-4-audio`
@available(iOS, introduced: 3.0, deprecated: 15.0, message: "Use UTTypeMPEG4Audio instead.")
nonisolated(unsafe) public let kUTTypeMPEG4Audio: CFString = "public.mpeg-4-audio"

/// `public.avi`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeAVI instead.")
nonisolated(unsafe) public let kUTTypeAVIMovie: CFString = "public.avi"

/// `public.aiff-audio`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeAIFF instead.")
nonisolated(unsafe) public let kUTTypeAudioInterchangeFileFormat: CFString = "public.aiff-audio"

/// `com.microsoft.waveform-audio`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeWAV instead.")
nonisolated(unsafe) public let kUTTypeWaveformAudio: CFString = "com.microsoft.waveform-audio"

/// `public.midi-audio`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeMIDI instead.")
nonisolated(unsafe) public let kUTTypeMIDIAudio: CFString = "public.midi-audio"

// MARK: Archives

/// `org.gnu.gnu-zip-archive`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeGZIP instead.")
nonisolated(unsafe) public let kUTTypeGNUZipArchive: CFString = "org.gnu.gnu-zip-archive"

/// `public.zip-archive`
@available(iOS, introduced: 8.0, deprecated: 15.0, message: "Use UTTypeZIP instead.")
nonisolated(unsafe) public let kUTTypeZipArchive: CFString = "public.zip-archive"
