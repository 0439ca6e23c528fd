/// How an interpolated `Bool` is written: Apple's `OSLogBoolFormat` (its `%{bool}d` and `%{BOOL}d` decoders).
public enum OSLogBoolFormat: Equatable, Hashable, Sendable {
    /// `true` / `false`.
    case truth
    /// `YES` / `NO`.
    case answer
}

extension OSLogBoolFormat {
    func format(_ value: Bool) -> String {
        switch self {
        case .truth: value ? "true" : "false"
        case .answer: value ? "YES" : "NO"
        }
    }
}
