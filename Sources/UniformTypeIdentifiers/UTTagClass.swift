/// A kind of tag that names a type outside the type system: filename extensions and MIME types.
public struct UTTagClass: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Filename extensions, such as `jpeg` (`public.filename-extension`).
    public static var filenameExtension: UTTagClass { UTTagClass(rawValue: "public.filename-extension") }

    /// MIME types, such as `image/jpeg` (`public.mime-type`).
    public static var mimeType: UTTagClass { UTTagClass(rawValue: "public.mime-type") }

    public var description: String { rawValue }

    public var debugDescription: String { "UTTagClass(\(rawValue))" }
}
