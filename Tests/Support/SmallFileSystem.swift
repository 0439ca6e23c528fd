import Foundation

/// A tmpfs of a few hundred kilobytes mounted for one test, to run out of disk space for real (ENOSPC). Mounting
/// needs root (CI and the developers' machines run as root); where it is not allowed, `mount` returns nil and the
/// test records that it could not run the check.
public final class SmallFileSystem: @unchecked Sendable {
    public let path: String

    private init(path: String) { self.path = path }

    /// Mounts a tmpfs of `kilobytes` at `path` (an existing folder), or at a new temporary folder.
    public static func mount(kilobytes: Int, at path: String? = nil) throws -> SmallFileSystem? {
        guard getuid() == 0 else { return nil }
        let path = try path ?? TestSupport.temporaryDirectory("nse-small-fs")
        let mounted = try TestSupport.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
        guard mounted.status == 0 else { return nil }
        return SmallFileSystem(path: path)
    }

    /// Fills the file system with a file until writes fail; returns that file's path (remove it to free the space).
    @discardableResult
    public func fill() -> String {
        let filler = path + "/filler-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: filler, contents: nil)
        if let handle = FileHandle(forWritingAtPath: filler) {
            let chunk = Data(count: 4096)
            // Bounded: a tmpfs of this size fills in far fewer writes.
            for _ in 0..<100_000 {
                do { try handle.write(contentsOf: chunk) } catch { break }
            }
            try? handle.close()
        }
        return filler
    }

    deinit {
        _ = try? TestSupport.run("/bin/umount", ["-l", path])
    }
}
