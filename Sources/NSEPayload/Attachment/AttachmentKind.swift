/// The kinds of file a notification shows and the types Apple lists for each (UNNotificationAttachment's table):
/// what `UNNotificationAttachment` checks when it is made, and the host again once the extension is done.
public enum AttachmentKind: String, Sendable, CaseIterable {
    case audio, image, movie

    /// Apple's limits.
    public var maximumBytes: Int {
        switch self {
        case .audio: 5 * 1_024 * 1_024
        case .image: 10 * 1_024 * 1_024
        case .movie: 50 * 1_024 * 1_024
        }
    }

    /// The supported types: UTI, kind, filename extensions.
    public static let types: [(type: String, kind: AttachmentKind, extensions: [String])] = [
        ("public.aiff-audio", .audio, ["aif", "aiff"]),
        ("com.microsoft.waveform-audio", .audio, ["wav", "wave"]),
        ("public.mp3", .audio, ["mp3"]),
        ("public.mpeg-4-audio", .audio, ["m4a"]),
        ("public.jpeg", .image, ["jpg", "jpeg", "jpe"]),
        ("com.compuserve.gif", .image, ["gif"]),
        ("public.png", .image, ["png"]),
        ("public.mpeg", .movie, ["mpg", "mpeg"]),
        ("public.mpeg-2-video", .movie, ["m2v"]),
        ("public.mpeg-4", .movie, ["mp4"]),
        ("public.avi", .movie, ["avi"]),
    ]

    /// The MIME types messengers send for each supported type (the file-transfer body's `content-type`).
    public static let mimeTypes: [String: String] = [
        "audio/aiff": "public.aiff-audio", "audio/x-aiff": "public.aiff-audio",
        "audio/wav": "com.microsoft.waveform-audio",
        "audio/wave": "com.microsoft.waveform-audio", "audio/x-wav": "com.microsoft.waveform-audio",
        "audio/mpeg": "public.mp3", "audio/mp3": "public.mp3", "audio/mp4": "public.mpeg-4-audio",
        "audio/x-m4a": "public.mpeg-4-audio", "audio/m4a": "public.mpeg-4-audio", "image/jpeg": "public.jpeg",
        "image/jpg": "public.jpeg", "image/gif": "com.compuserve.gif", "image/png": "public.png",
        "video/mpeg": "public.mpeg", "video/mpeg2": "public.mpeg-2-video", "video/mp4": "public.mpeg-4",
        "video/avi": "public.avi", "video/x-msvideo": "public.avi",
    ]

    /// The type, kind and usual filename extension of a MIME type (parameters ignored); nil when iOS does not take
    /// it as an attachment.
    public static func recognize(mimeType: String) -> (type: String, kind: AttachmentKind, pathExtension: String)? {
        let bare = mimeType.split(separator: ";").first.map { $0.trimmingASCIISpaces().lowercased() } ?? ""
        guard let type = mimeTypes[bare], let match = types.first(where: { $0.type == type }) else { return nil }
        return (match.type, match.kind, match.extensions[0])
    }

    /// The type and kind a hint (a UTI) or, failing that, a filename extension names; nil when unsupported.
    public static func recognize(hint: String?, pathExtension: String) -> (String, AttachmentKind)? {
        if let hint, let match = types.first(where: { $0.type == hint }) { return (match.type, match.kind) }
        let suffix = pathExtension.lowercased()
        guard !suffix.isEmpty, let match = types.first(where: { $0.extensions.contains(suffix) }) else { return nil }
        return (match.type, match.kind)
    }
}

extension Substring {
    fileprivate func trimmingASCIISpaces() -> Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
