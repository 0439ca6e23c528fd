/// String-based path arithmetic (POSIX separators).
public enum Path {
    /// Joins path components with single slashes.
    public static func join(_ base: String, _ components: String...) -> String {
        var result = base
        for component in components where !component.isEmpty {
            if component.hasPrefix("/") {
                result = component
                continue
            }
            if !result.hasSuffix("/") && !result.isEmpty { result += "/" }
            result += component
        }
        return result
    }

    /// Everything before the last slash (`.` when there is none).
    public static func dirname(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    /// The last path component.
    public static func basename(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// Removes `.`, empty components and resolves `..` lexically.
    public static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }

    /// The file extension without the dot, lowercased ("" when none).
    public static func fileExtension(_ path: String) -> String {
        let name = basename(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }
}
