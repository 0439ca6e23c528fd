import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file only its owner may read: the device's private key, its SIP password, a sender's identity. One that group
/// or others can access is refused with one line naming its mode; its content is never in an error.
enum OwnerOnlyFile {
    /// Reads `path` (at most `limit` bytes; nil when longer). `what` names its content in a refusal ("a private
    /// key"); `missing` is the error for a file that cannot be found or inspected.
    static func read(_ path: String, what: String, limit: Int = 8192, missing: (SystemError) -> DeviceError)
        throws(DeviceError) -> String?
    {
        let mode: mode_t
        do { mode = try FileSystem.permissions(path) } catch { throw missing(error) }
        guard mode & 0o077 == 0 else {
            throw DeviceError(
                .insecureKey,
                "\(path) has mode \(String(mode, radix: 8)); refusing \(what) that others can access (chmod 600 it)")
        }
        do { return try FileSystem.readText(path, limit: limit) } catch {
            throw DeviceError(.unreadable, error.description)
        }
    }
}
