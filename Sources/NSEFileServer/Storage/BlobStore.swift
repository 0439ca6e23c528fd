import NSECrypto
import NSEJSON
import NSESystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The storage folder: one folder per file, `<id>/blob` (the bytes as uploaded) and `<id>/meta.json` (`size`,
/// `sha256`, `uploaded_at`). An upload is written in a temporary folder, `.upload-<pid>-<random>`, synced, and renamed
/// to its id in one step: a folder named by an id is always whole, and nothing half-written is ever served.
struct BlobStore: Sendable {
    static let blobName = "blob"
    static let metadataName = "meta.json"
    static let uploadPrefix = ".upload-"
    /// The most `meta.json` may hold.
    static let metadataLimit = 4096

    /// Absolute.
    let directory: String

    /// Opens the folder, creating it (mode 0700) and its parents, and removes what uploads a dead server left.
    init(directory: String) throws(FileServerError) {
        let absolute = FileSystem.absolute(directory)
        do {
            try FileSystem.createDirectory(absolute, mode: 0o700)
        } catch {
            throw FileServerError(.storage, "--storage \(absolute): \(error.description)")
        }
        guard access(absolute, R_OK | W_OK | X_OK) == 0 else {
            throw FileServerError(.storage, "--storage \(absolute): \(SystemError.current("access").description)")
        }
        self.directory = absolute
        removeAbandonedUploads()
    }

    /// The temporary folders of uploads whose server is no longer running (killed mid-upload).
    private func removeAbandonedUploads() {
        for name in (try? FileSystem.contents(ofDirectory: directory)) ?? [] where name.hasPrefix(Self.uploadPrefix) {
            guard let pid = Int32(name.dropFirst(Self.uploadPrefix.count).prefix { $0 != "-" }) else { continue }
            if pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH) {
                try? FileSystem.removeTree(Path.join(directory, name))
            }
        }
    }

    /// A new upload: its temporary folder and the `blob` file open for writing.
    func begin() throws(SystemError) -> PendingUpload {
        let folder = Path.join(directory, "\(Self.uploadPrefix)\(getpid())-\(Hex.random(bytes: 8))")
        if mkdir(folder, 0o700) != 0 { throw SystemError.current("mkdir", path: folder) }
        let path = Path.join(folder, Self.blobName)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            let failure = SystemError.current("create", path: path)
            rmdir(folder)
            throw failure
        }
        return PendingUpload(storage: directory, folder: folder, fd: fd)
    }

    /// The stored file `id`, opened; nil when there is none (or `id` is not an id). Opened one folder at a time
    /// without following a symbolic link, and served only when it is a regular file whose size its metadata gives.
    func lookUp(_ id: String) throws(SystemError) -> StoredBlob? {
        guard BlobID.isValid(id) else { return nil }
        let store = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard store >= 0 else { throw SystemError.current("open", path: directory) }
        defer { close(store) }
        let folder = openat(store, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else {
            if [ENOENT, ENOTDIR, ELOOP].contains(errno) { return nil }
            throw SystemError.current("open", path: Path.join(directory, id))
        }
        defer { close(folder) }
        let fd = openat(folder, Self.blobName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if [ENOENT, ELOOP].contains(errno) { return nil }
            throw SystemError.current("open", path: Path.join(directory, id, Self.blobName))
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return nil
        }
        let metadata: (size: Int, sha256: String)?
        do { metadata = try readMetadata(in: folder, id: id) } catch {
            close(fd)
            throw error
        }
        guard let metadata, metadata.size == Int(info.st_size) else {
            close(fd)
            throw SystemError(errnoCode: EIO, operation: "check", path: Path.join(directory, id, Self.metadataName))
        }
        // From here the descriptor belongs to the StoredBlob, which closes it.
        return StoredBlob(id: id, fd: fd, size: metadata.size, sha256: metadata.sha256)
    }

    private func readMetadata(in folder: Int32, id: String) throws(SystemError) -> (size: Int, sha256: String)? {
        let path = Path.join(directory, id, Self.metadataName)
        let fd = openat(folder, Self.metadataName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.current("open", path: path) }
        defer { close(fd) }
        guard let bytes = try FileSystem.readAll(fd: fd, limit: Self.metadataLimit),
            let object = (try? JSON.parse(bytes))?.objectValue,
            let size = object["size"]?.intValue, size >= 0,
            let sha256 = object["sha256"]?.stringValue, sha256.utf8.count == 64,
            sha256.utf8.allSatisfy({ Hex.value(ofDigit: $0) != nil })
        else { return nil }
        return (Int(size), sha256)
    }

    /// What `meta.json` holds.
    static func metadata(size: Int, sha256: String, uploadedAt: Int64) -> JSON {
        ["size": .int(Int64(size)), "sha256": .string(sha256), "uploaded_at": .int(uploadedAt)]
    }
}
