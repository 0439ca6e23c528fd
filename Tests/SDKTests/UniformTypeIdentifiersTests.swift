import Foundation
import MobileCoreServices
import Testing
import UniformTypeIdentifiers

/// UTType as Apple's: the identifiers of the core types, the conformance tree, lookup by filename extension and MIME
/// type, dynamic types for tags nobody declares, and the URL helpers.
@Suite struct UniformTypeIdentifiersTests {
    @Test(arguments: [
        (UTType.item, "public.item"), (.content, "public.content"), (.data, "public.data"),
        (.image, "public.image"), (.jpeg, "public.jpeg"), (.png, "public.png"), (.gif, "com.compuserve.gif"),
        (.heic, "public.heic"), (.heif, "public.heif"), (.webP, "org.webmproject.webp"), (.tiff, "public.tiff"),
        (.bmp, "com.microsoft.bmp"), (.audiovisualContent, "public.audiovisual-content"), (.movie, "public.movie"),
        (.video, "public.video"), (.audio, "public.audio"), (.mpeg4Movie, "public.mpeg-4"),
        (.quickTimeMovie, "com.apple.quicktime-movie"), (.mpeg, "public.mpeg"), (.mpeg2Video, "public.mpeg-2-video"),
        (.avi, "public.avi"), (.mp3, "public.mp3"), (.mpeg4Audio, "public.mpeg-4-audio"),
        (.wav, "com.microsoft.waveform-audio"), (.aiff, "public.aiff-audio"), (.midi, "public.midi-audio"),
        (.text, "public.text"), (.plainText, "public.plain-text"), (.utf8PlainText, "public.utf8-plain-text"),
        (.json, "public.json"), (.pdf, "com.adobe.pdf"), (.zip, "public.zip-archive"), (.url, "public.url"),
        (.fileURL, "public.file-url"), (.compositeContent, "public.composite-content"), (.archive, "public.archive"),
        (.html, "public.html"), (.xml, "public.xml"), (.rtf, "public.rtf"), (.svg, "public.svg-image"),
        (.ico, "com.microsoft.ico"), (.gzip, "org.gnu.gnu-zip-archive"),
        (.delimitedText, "public.delimited-values-text"),
        (.commaSeparatedText, "public.comma-separated-values-text"),
    ])
    func coreTypesHaveApplesIdentifiers(type: UTType, identifier: String) {
        #expect(type.identifier == identifier)
        #expect(type.isDeclared && !type.isDynamic)
        #expect(UTType(identifier) == type)
        #expect(type.localizedDescription != nil)
    }

    @Test func typesConformAsUTCoreTypesSays() {
        #expect(UTType.jpeg.conforms(to: .image) && UTType.jpeg.conforms(to: .data) && UTType.jpeg.conforms(to: .item))
        #expect(UTType.jpeg.conforms(to: .content) && !UTType.jpeg.conforms(to: .audiovisualContent))
        #expect(UTType.heic.conforms(to: .image) && !UTType.heic.conforms(to: .heif))
        #expect(UTType.mpeg4Movie.conforms(to: .movie) && UTType.mpeg4Movie.conforms(to: .audiovisualContent))
        #expect(!UTType.mpeg4Movie.conforms(to: .video) && UTType.mpeg2Video.conforms(to: .video))
        #expect(UTType.mp3.conforms(to: .audio) && !UTType.mp3.conforms(to: .movie))
        #expect(UTType.aiff.conforms(to: .audio) && UTType.wav.conforms(to: .audio) && UTType.midi.conforms(to: .audio))
        // MPEG-4 audio is an MPEG-4 file, hence a movie as well as audio: ask for audio first when sorting attachments.
        #expect(UTType.mpeg4Audio.conforms(to: .audio) && UTType.mpeg4Audio.conforms(to: .mpeg4Movie))
        #expect(UTType.utf8PlainText.conforms(to: .text) && UTType.json.conforms(to: .text))
        #expect(UTType.pdf.conforms(to: .compositeContent) && UTType.zip.conforms(to: .archive))
        #expect(UTType.fileURL.conforms(to: .url) && UTType.url.conforms(to: .data))
        #expect(UTType.data.conforms(to: .item) && !UTType.item.conforms(to: .data))
    }

    @Test func subtypesAndSupertypesExcludeTheTypeItself() {
        #expect(UTType.jpeg.conforms(to: .jpeg))
        #expect(!UTType.jpeg.isSubtype(of: .jpeg) && !UTType.jpeg.isSupertype(of: .jpeg))
        #expect(UTType.jpeg.isSubtype(of: .image) && UTType.image.isSupertype(of: .jpeg))
        #expect(!UTType.image.isSubtype(of: .jpeg))
        #expect(UTType.jpeg.supertypes == [.image, .data, .content, .item])
    }

    @Test(arguments: [
        ("jpg", "public.jpeg"), ("JPG", "public.jpeg"), ("jpeg", "public.jpeg"), ("jpe", "public.jpeg"),
        ("png", "public.png"), ("gif", "com.compuserve.gif"), ("heic", "public.heic"), ("HEIF", "public.heif"),
        ("webp", "org.webmproject.webp"), ("tif", "public.tiff"), ("tiff", "public.tiff"), ("bmp", "com.microsoft.bmp"),
        ("mp4", "public.mpeg-4"), ("m4v", "com.apple.m4v-video"), ("mov", "com.apple.quicktime-movie"),
        ("qt", "com.apple.quicktime-movie"), ("mpg", "public.mpeg"), ("mpeg", "public.mpeg"),
        ("m2v", "public.mpeg-2-video"), ("avi", "public.avi"), ("mp3", "public.mp3"), ("m4a", "com.apple.m4a-audio"),
        ("wav", "com.microsoft.waveform-audio"), ("aif", "public.aiff-audio"), ("aiff", "public.aiff-audio"),
        ("mid", "public.midi-audio"), ("midi", "public.midi-audio"), ("txt", "public.plain-text"),
        ("json", "public.json"), ("pdf", "com.adobe.pdf"), ("zip", "public.zip-archive"),
    ])
    func findsTheTypeOfAFilenameExtensionInAnyCase(filenameExtension: String, identifier: String) throws {
        let type = try #require(UTType(filenameExtension: filenameExtension))
        #expect(type.identifier == identifier)
        #expect(type.isDeclared)
    }

    @Test func attachmentKindsFollowFromTheExtension() throws {
        let kinds: [(String, UTType)] = [
            ("jpg", .image), ("png", .image), ("gif", .image), ("mp3", .audio), ("m4a", .audio), ("wav", .audio),
            ("aiff", .audio), ("mp4", .movie), ("m4v", .movie), ("mov", .movie), ("mpg", .movie), ("avi", .movie),
        ]
        for (filenameExtension, kind) in kinds {
            let type = try #require(UTType(filenameExtension: filenameExtension))
            #expect(type.conforms(to: kind), "\(filenameExtension)")
        }
    }

    @Test func findsTheTypeOfAMIMEType() {
        #expect(UTType(mimeType: "image/jpeg") == .jpeg)
        #expect(UTType(mimeType: "IMAGE/PNG") == .png)
        #expect(UTType(mimeType: "audio/mpeg") == .mp3)
        #expect(UTType(mimeType: "video/mp4") == .mpeg4Movie)
        #expect(UTType(mimeType: "video/quicktime") == .quickTimeMovie)
        #expect(UTType(mimeType: "audio/x-m4a")?.identifier == "com.apple.m4a-audio")
        #expect(UTType(mimeType: "application/json") == .json)
        #expect(UTType(mimeType: "application/zip") == .zip)
    }

    @Test func preferredTagsAreTheFirstDeclared() {
        #expect(UTType.jpeg.preferredFilenameExtension == "jpeg" && UTType.jpeg.preferredMIMEType == "image/jpeg")
        #expect(UTType.png.preferredFilenameExtension == "png" && UTType.gif.preferredMIMEType == "image/gif")
        #expect(UTType.mpeg4Movie.preferredFilenameExtension == "mp4")
        #expect(UTType.quickTimeMovie.preferredFilenameExtension == "mov")
        #expect(UTType.mp3.preferredMIMEType == "audio/mpeg" && UTType.mpeg4Audio.preferredFilenameExtension == "m4a")
        #expect(UTType.tiff.preferredFilenameExtension == "tiff" && UTType.aiff.preferredFilenameExtension == "aiff")
        #expect(UTType.image.preferredFilenameExtension == nil && UTType.data.preferredMIMEType == nil)
        #expect(
            UTType.jpeg.tags == [.filenameExtension: ["jpeg", "jpg", "jpe"], .mimeType: ["image/jpeg", "image/jpg"]])
    }

    @Test func makesADynamicTypeForATagNobodyDeclares() throws {
        // The identifier Apple's platforms give `sql` (dyn.a, then "?0=6:1=sql" in their base 32).
        let sql = try #require(UTType(filenameExtension: "sql"))
        #expect(sql.identifier == "dyn.ah62d4rv4ge81g6pq")
        #expect(sql.isDynamic && !sql.isDeclared && !sql.isPublic)
        #expect(sql.conforms(to: .data) && !sql.conforms(to: .image))
        #expect(sql.preferredFilenameExtension == "sql" && sql.preferredMIMEType == nil)
        #expect(sql.localizedDescription == nil)

        // The identifier alone rebuilds the type.
        let rebuilt = try #require(UTType(sql.identifier))
        #expect(rebuilt == sql && rebuilt.preferredFilenameExtension == "sql" && rebuilt.conforms(to: .data))

        let mime = try #require(UTType(mimeType: "application/x-nse-test", conformingTo: .text))
        #expect(mime.isDynamic && mime.conforms(to: .text) && mime.preferredMIMEType == "application/x-nse-test")
        #expect(UTType(mime.identifier)?.preferredMIMEType == "application/x-nse-test")

        // A known extension asked to conform to a type it does not: a dynamic type of that supertype.
        let jpegAsAudio = try #require(UTType(filenameExtension: "jpg", conformingTo: .audio))
        #expect(jpegAsAudio.isDynamic && jpegAsAudio.conforms(to: .audio) && !jpegAsAudio.conforms(to: .image))
    }

    @Test func refusesWhatIsNotATag() {
        #expect(UTType(filenameExtension: "") == nil)
        #expect(UTType(mimeType: "") == nil)
        #expect(UTType(filenameExtension: "a:b") == nil)
    }

    @Test func knowsOnlyDeclaredAndDynamicIdentifiers() {
        #expect(UTType("com.example.unknown") == nil)
        #expect(UTType("dyn.notbase32!") == nil)
        #expect(UTType("PUBLIC.JPEG")?.identifier == "public.jpeg")
        #expect(UTType("public.jpeg") == UTType("Public.Jpeg"))
    }

    @Test func anAppsOwnTypeConformsToItsParent() {
        let document = UTType(exportedAs: "com.example.document", conformingTo: .json)
        #expect(document.identifier == "com.example.document")
        #expect(document.conforms(to: .json) && document.conforms(to: .text) && document.conforms(to: .data))
        #expect(!document.isDeclared && !document.isDynamic && document.preferredFilenameExtension == nil)
        let draft = UTType(importedAs: "com.example.draft", conformingTo: document)
        #expect(draft.conforms(to: document) && draft.conforms(to: .text))
        #expect(UTType(importedAs: "com.example.bare").supertypes.isEmpty)
        #expect(UTType(exportedAs: "public.png") == .png && UTType(exportedAs: "public.png").isDeclared)
    }

    @Test func encodesAsItsIdentifier() throws {
        let data = try JSONEncoder().encode([UTType.png, UTType(exportedAs: "com.example.document")])
        #expect(String(decoding: data, as: UTF8.self) == #"["public.png","com.example.document"]"#)
        let decoded = try JSONDecoder().decode([UTType].self, from: data)
        #expect(decoded.map(\.identifier) == ["public.png", "com.example.document"])
        #expect(decoded[0].conforms(to: .image))
    }

    @Test func describesItselfByIdentifier() {
        #expect(UTType.jpeg.description == "public.jpeg")
        #expect(UTType.jpeg.debugDescription == "public.jpeg (JPEG image)")
        #expect(UTTagClass.mimeType.rawValue == "public.mime-type")
        #expect(UTTagClass.filenameExtension.rawValue == "public.filename-extension")
    }

    @Test func namesFilesForATypeLikeFoundation() {
        let folder = URL(fileURLWithPath: "/tmp/attachments", isDirectory: true)
        #expect(folder.appendingPathComponent("photo", conformingTo: .jpeg).lastPathComponent == "photo.jpeg")
        // An extension that already names a conforming type is kept, in its own case.
        #expect(folder.appendingPathComponent("photo.JPG", conformingTo: .image).lastPathComponent == "photo.JPG")
        #expect(
            folder.appendingPathComponent("clip.mp3", conformingTo: .mpeg4Movie).lastPathComponent == "clip.mp3.mp4")
        #expect(folder.appendingPathComponent("blob", conformingTo: .data).lastPathComponent == "blob")
        #expect(folder.appendingPathComponent("a").appendingPathExtension(for: .png).lastPathComponent == "a.png")
        var url = folder
        url.appendPathComponent("voice", conformingTo: .mpeg4Audio)
        #expect(url.lastPathComponent == "voice.m4a")
        url.appendPathExtension(for: .gzip)
        #expect(url.lastPathComponent == "voice.m4a.gz")
    }

    @Test func typesAreUsableAcrossTasks() async {
        let types: [UTType] = [.jpeg, .png, .mp3]
        let identifiers = await Task.detached { types.map(\.identifier) }.value
        #expect(identifiers == ["public.jpeg", "public.png", "public.mp3"])
    }
}

/// MobileCoreServices' constants and functions, as the NSE code that still uses them writes them: `CFString` values
/// cast to `String`, tags cast to `CFString`, +1 results taken with `takeRetainedValue()`.
@Suite struct MobileCoreServicesTests {
    @Test func constantsAreTheIdentifiers() {
        let constants: [(CFString, UTType)] = [
            (kUTTypeJPEG, .jpeg), (kUTTypePNG, .png), (kUTTypeGIF, .gif), (kUTTypeImage, .image),
            (kUTTypeMPEG4, .mpeg4Movie), (kUTTypeQuickTimeMovie, .quickTimeMovie), (kUTTypeMPEG, .mpeg),
            (kUTTypeMPEG2Video, .mpeg2Video), (kUTTypeAVIMovie, .avi), (kUTTypeMovie, .movie), (kUTTypeVideo, .video),
            (kUTTypeAudio, .audio), (kUTTypeMP3, .mp3), (kUTTypeMPEG4Audio, .mpeg4Audio), (kUTTypeWaveformAudio, .wav),
            (kUTTypeAudioInterchangeFileFormat, .aiff), (kUTTypeMIDIAudio, .midi),
            (kUTTypeAudiovisualContent, .audiovisualContent), (kUTTypeData, .data), (kUTTypeContent, .content),
            (kUTTypeItem, .item), (kUTTypeText, .text), (kUTTypePlainText, .plainText),
            (kUTTypeUTF8PlainText, .utf8PlainText), (kUTTypeURL, .url), (kUTTypeFileURL, .fileURL),
            (kUTTypeJSON, .json), (kUTTypePDF, .pdf), (kUTTypeZipArchive, .zip), (kUTTypeGNUZipArchive, .gzip),
            (kUTTypeTIFF, .tiff), (kUTTypeBMP, .bmp), (kUTTypeICO, .ico), (kUTTypeScalableVectorGraphics, .svg),
            (kUTTypeHTML, .html), (kUTTypeXML, .xml), (kUTTypeRTF, .rtf), (kUTTypeArchive, .archive),
            (kUTTypeCompositeContent, .compositeContent), (kUTTypeDelimitedText, .delimitedText),
            (kUTTypeCommaSeparatedText, .commaSeparatedText),
        ]
        for (constant, type) in constants { #expect(constant as String == type.identifier) }
        #expect(kUTTagClassFilenameExtension as String == UTTagClass.filenameExtension.rawValue)
        #expect(kUTTagClassMIMEType as String == UTTagClass.mimeType.rawValue)
    }

    @Test func bridgesLikeCFString() {
        let options: [AnyHashable: Any] = ["UNNotificationAttachmentOptionsTypeHintKey": kUTTypeJPEG]
        #expect(options["UNNotificationAttachmentOptionsTypeHintKey"] as? String == "public.jpeg")
        let tag = "png" as CFString
        #expect(tag as String == "png")
    }

    @Test func resolvesTagsAsUTTypeDoes() throws {
        let jpeg = try #require(
            UTTypeCreatePreferredIdentifierForTag(kUTTagClassFilenameExtension, "JPG" as CFString, nil)?
                .takeRetainedValue())
        #expect(jpeg as String == "public.jpeg")
        #expect(UTTypeConformsTo(jpeg, kUTTypeImage) && !UTTypeConformsTo(jpeg, kUTTypeAudio))
        let mime = UTTypeCopyPreferredTagWithClass(jpeg, kUTTagClassMIMEType)?.takeRetainedValue()
        #expect(mime.map { $0 as String } == "image/jpeg")
        let filenameExtension = UTTypeCopyPreferredTagWithClass(kUTTypeMP3, kUTTagClassFilenameExtension)?
            .takeRetainedValue()
        #expect(filenameExtension.map { $0 as String } == "mp3")

        let m4a = try #require(
            UTTypeCreatePreferredIdentifierForTag(kUTTagClassMIMEType, "audio/x-m4a" as CFString, kUTTypeAudio)?
                .takeRetainedValue())
        #expect(UTTypeConformsTo(m4a, kUTTypeMPEG4Audio))
        #expect(UTTypeCopyPreferredTagWithClass(kUTTypeImage, kUTTagClassFilenameExtension) == nil)
    }

    @Test func unknownTagsGetTheDynamicIdentifierUTTypeGives() throws {
        let sql = try #require(
            UTTypeCreatePreferredIdentifierForTag(kUTTagClassFilenameExtension, "sql" as CFString, kUTTypeData)?
                .takeRetainedValue())
        #expect(sql as String == UTType(filenameExtension: "sql")?.identifier)
        #expect(UTTypeIsDynamic(sql) && !UTTypeIsDeclared(sql) && UTTypeConformsTo(sql, kUTTypeData))
        let noSupertype = try #require(
            UTTypeCreatePreferredIdentifierForTag(kUTTagClassFilenameExtension, "sql" as CFString, nil)?
                .takeRetainedValue())
        #expect(UTTypeIsDynamic(noSupertype) && !UTTypeConformsTo(noSupertype, kUTTypeData))
        #expect(UTTypeCreatePreferredIdentifierForTag(kUTTagClassFilenameExtension, "" as CFString, nil) == nil)
    }

    @Test func comparesAndDescribesIdentifiers() {
        #expect(UTTypeEqual("PUBLIC.jpeg" as CFString, kUTTypeJPEG) && !UTTypeEqual(kUTTypePNG, kUTTypeJPEG))
        #expect(UTTypeConformsTo("com.example.x" as CFString, "com.example.x" as CFString))
        #expect(!UTTypeConformsTo("com.example.x" as CFString, kUTTypeData))
        #expect(UTTypeIsDeclared(kUTTypePNG) && !UTTypeIsDynamic(kUTTypePNG))
        #expect(UTTypeCopyDescription(kUTTypePNG)?.takeRetainedValue() == "PNG image")
        #expect(UTTypeCopyDescription("com.example.x" as CFString) == nil)
    }
}
