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

    /// The type and kind a hint (a UTI) or, failing that, a filename extension names; nil when unsupported.
    public static func recognize(hint: String?, pathExtension: String) -> (String, AttachmentKind)? {
        if let hint, let match = types.first(where: { $0.type == hint }) { return (match.type, match.kind) }
        let suffix = pathExtension.lowercased()
        guard !suffix.isEmpty, let match = types.first(where: { $0.extensions.contains(suffix) }) else { return nil }
        return (match.type, match.kind)
    }
}
