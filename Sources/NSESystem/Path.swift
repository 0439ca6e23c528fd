/// String-based path arithmetic (POSIX separators).
public enum Path {
    /// Joins path components with single slashes; an absolute component starts the path again.
    public static func join(_ base: String, _ components: String...) -> String {
        var result = start(base, extra: components.reduce(0) { $0 + $1.utf8.count + 1 })
        for component in components { append(component, to: &result) }
        return result
    }

    /// `join` of one component, without the variadic array (most joins; a push joins a few dozen paths).
    public static func join(_ base: String, _ component: String) -> String {
        var result = start(base, extra: component.utf8.count + 1)
        append(component, to: &result)
        return result
    }

    /// `join` of two components, without the variadic array.
    public static func join(_ base: String, _ first: String, _ second: String) -> String {
        var result = start(base, extra: first.utf8.count + second.utf8.count + 2)
        append(first, to: &result)
        append(second, to: &result)
        return result
    }

    /// `base` in a string with room for `extra` more bytes: a path is built in one allocation (appended to as it
    /// came, it was copied when the base's storage was shared and grown again for the component).
    private static func start(_ base: String, extra: Int) -> String {
        var result = ""
        result.reserveCapacity(base.utf8.count + extra)
        result += base
        return result
    }

    /// Slashes found by byte, as the kernel reads a path.
    private static func append(_ component: String, to result: inout String) {
        let slash = UInt8(ascii: "/")
        guard !component.isEmpty else { return }
        if component.utf8.first == slash {
            result.removeAll(keepingCapacity: true)
        } else if !result.isEmpty && result.utf8.last != slash {
            result += "/"
        }
        result += component
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
