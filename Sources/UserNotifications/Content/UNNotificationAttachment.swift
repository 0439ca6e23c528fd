public import Foundation
import NSEPayload

/// The key of `options` giving the file's type as a UTI (`public.jpeg`), when its name's extension does not.
// swift-format-ignore: AlwaysUseLowerCamelCase
public let UNNotificationAttachmentOptionsTypeHintKey: String = "UNNotificationAttachmentOptionsTypeHintKey"
/// The key of `options` hiding the thumbnail (a `Bool` or `NSNumber`).
// swift-format-ignore: AlwaysUseLowerCamelCase
public let UNNotificationAttachmentOptionsThumbnailHiddenKey: String =
    "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// The key of `options` giving the thumbnail's clipping rectangle (a dictionary of a normalized rectangle).
// swift-format-ignore: AlwaysUseLowerCamelCase
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey: String =
    "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// The key of `options` giving the frame (animated image) or time in seconds (movie) of the thumbnail.
// swift-format-ignore: AlwaysUseLowerCamelCase
public let UNNotificationAttachmentOptionsThumbnailTimeKey: String = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// A file shown with a notification: an image, an audio clip or a movie, checked as iOS checks it.
///
/// The initializer verifies what Apple says it does: a file URL the process can read (else
/// ``UNError/Code/attachmentInvalidURL``, 100), one of the supported types, from the type hint or the name's extension
/// (else ``UNError/Code/attachmentUnrecognizedType``, 101), and not over its kind's limit: audio 5 MB, image 10 MB,
/// movie 50 MB (else ``UNError/Code/attachmentInvalidFileSize``, 102). When the content is delivered, the host checks
/// the file again after the extension has finished, as iOS validates remote notifications' attachments then, and moves
/// it into the device's attachment store (`DIR/attachments/`): the extension cannot use the file afterwards.
open class UNNotificationAttachment: NSObject, NSCopying {
    open var identifier: String { _identifier }
    open var url: URL { _url }
    /// The file's type, a UTI.
    open var type: String { _type }

    private let _identifier: String
    private let _url: URL
    private let _type: String
    let kind: AttachmentKind
    let size: Int
    let thumbnailHidden: Bool

    public convenience init(identifier: String, url URL: URL, options: [AnyHashable: Any]? = nil) throws {
        guard URL.isFileURL else { throw UNError(.attachmentInvalidURL) }
        let path = URL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isReadableFile(atPath: path)
        else { throw UNError(.attachmentInvalidURL) }
        let hint = options?[UNNotificationAttachmentOptionsTypeHintKey].map { "\($0)" }
        guard let (type, kind) = AttachmentKind.recognize(hint: hint, pathExtension: URL.pathExtension) else {
            throw UNError(.attachmentUnrecognizedType)
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= kind.maximumBytes else { throw UNError(.attachmentInvalidFileSize) }
        let hidden = (options?[UNNotificationAttachmentOptionsThumbnailHiddenKey] as? Bool) ?? false
        self.init(
            identifier: identifier.isEmpty ? UUID().uuidString : identifier, url: URL, type: type, kind: kind,
            size: size, thumbnailHidden: hidden)
    }

    init(identifier: String, url: URL, type: String, kind: AttachmentKind, size: Int, thumbnailHidden: Bool) {
        _identifier = identifier
        _url = url
        _type = type
        self.kind = kind
        self.size = size
        self.thumbnailHidden = thumbnailHidden
        super.init()
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationAttachment else { return false }
        return other.identifier == identifier && other.url == url && other.type == type
    }

    open override var hash: Int { identifier.hashValue }
}
