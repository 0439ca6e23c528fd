#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Read access to the process environment.
public enum Environment {
    /// The value of an environment variable, `nil` when unset or empty.
    public static func get(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let string = String(cString: value)
        return string.isEmpty ? nil : string
    }
}

/// The standard streams, written without buffering surprises.
public enum StandardStreams {
    /// Writes text to standard output.
    public static func writeOut(_ text: String) { FileSystem.writeFully(fd: 1, Array(text.utf8)) }
    /// Writes text to standard error.
    public static func writeError(_ text: String) { FileSystem.writeFully(fd: 2, Array(text.utf8)) }
}
