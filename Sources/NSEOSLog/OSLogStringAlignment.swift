/// The minimum width of an interpolated value, padded with spaces: Apple's `OSLogStringAlignment`.
///
/// The width counts characters and pads what the log shows, a hidden value's `<private>` included.
public struct OSLogStringAlignment {
    enum Anchor {
        /// Padded on the right (`.left(columns:)`).
        case start
        /// Padded on the left (`.right(columns:)`, `.none`).
        case end
    }

    let minimumColumnWidth: (() -> Int)?
    let anchor: Anchor

    /// No padding.
    public static var none: OSLogStringAlignment { OSLogStringAlignment(minimumColumnWidth: nil, anchor: .end) }

    /// At least `columns` wide, the value at the right.
    public static func right(columns: @autoclosure @escaping () -> Int) -> OSLogStringAlignment {
        OSLogStringAlignment(minimumColumnWidth: columns, anchor: .end)
    }

    /// At least `columns` wide, the value at the left.
    public static func left(columns: @autoclosure @escaping () -> Int) -> OSLogStringAlignment {
        OSLogStringAlignment(minimumColumnWidth: columns, anchor: .start)
    }
}

extension OSLogStringAlignment {
    /// `text` padded to the width, as printf pads `%*s`: a negative width left-aligns.
    func pad(_ text: String) -> String {
        guard let minimumColumnWidth else { return text }
        let width = minimumColumnWidth()
        return Self.pad(text, width: abs(width), left: anchor == .start || width < 0)
    }

    static func pad(_ text: String, width: Int, left: Bool) -> String {
        let missing = width - text.count
        guard missing > 0 else { return text }
        let spaces = String(repeating: " ", count: missing)
        return left ? text + spaces : spaces + text
    }
}
