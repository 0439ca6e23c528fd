#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A socket failure said the way a user reads it: what failed, where, and why in a few words
/// (`cannot listen on 127.0.0.1:8443: address already in use`), never a library's internals
/// (`bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)`). `NSESIP` adds the reading of NIO's errors.
public enum NetworkFailure {
    /// What was being done when the error came.
    public enum Action: Sendable {
        case listen, connect

        var verb: String {
            switch self {
            case .listen: "cannot listen on"
            case .connect: "cannot connect to"
            }
        }
    }

    /// `cannot listen on ADDRESS: reason` / `cannot connect to ADDRESS: reason`.
    public static func describe(_ action: Action, _ address: String, reason: String) -> String {
        "\(action.verb) \(address): \(reason)"
    }

    /// The system's text for an errno, lowercased as the rest of a one-line error ("address already in use").
    public static func phrase(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase ?? true else {
            return text
        }
        return first.lowercased() + text.dropFirst()
    }
}
