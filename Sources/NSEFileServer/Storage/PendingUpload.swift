import Crypto
import NIOCore
import NIOPosix
import NSECrypto
import NSEJSON
import NSESystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One upload being written: its temporary folder in the storage folder, the `blob` in it, hashed as it is written.
/// ``commit()`` makes it a stored file; anything else (the client gone, too large, a bad form, the server stopping)
/// removes the folder, at the latest when the last reference goes.
final class PendingUpload: Sendable {
    /// Bytes gathered before one write: fewer system calls and thread hops than one per received chunk.
    static let writeBatch = 256 * 1024

    /// A committed upload.
    struct Stored: Sendable {
        let id: String
        let size: Int
        /// Lowercase hex.
        let sha256: String
    }

    private struct State {
        var fd: Int32
        var hasher = SHA256()
        /// Bytes appended so far, written or not.
        var size = 0
        var buffered: [UInt8] = []
        /// Committed or abandoned: nothing more to do.
        var settled = false
    }

    /// The storage folder, where the upload's folder is renamed to its id.
    let storage: String
    /// The temporary folder.
    let folder: String
    /// Used by one request at a time; the lock makes the hand-offs to the thread pool safe.
    private let state: Mutex<State>

    init(storage: String, folder: String, fd: Int32) {
        self.storage = storage
        self.folder = folder
        self.state = Mutex(State(fd: fd))
    }

    deinit { settle() }

    /// Bytes appended so far.
    var size: Int { state.withLock { $0.size } }

    /// Appends `bytes`; every ``writeBatch`` bytes they are written and hashed on NIO's thread pool.
    func append(_ bytes: some Collection<UInt8>) async throws {
        let full = state.withLock { state in
            state.buffered.append(contentsOf: bytes)
            state.size += bytes.count
            return state.buffered.count >= Self.writeBatch
        }
        if full { try await NIOThreadPool.singleton.runIfActive { try self.writeBuffered() } }
    }

    /// Writes the rest, syncs the blob, writes and syncs `meta.json` and the folder, renames the folder to a new id
    /// and syncs the storage folder: once this returns the file survives a crash, and only then is it answered 201.
    func commit() async throws -> Stored {
        try await NIOThreadPool.singleton.runIfActive { try self.commitOnDisk() }
    }

    /// Removes the upload, on the thread pool (a large file's unlink takes a while), or here when the task is
    /// cancelled.
    func discard() async {
        do { try await NIOThreadPool.singleton.runIfActive { self.settle() } } catch { settle() }
    }

    private func writeBuffered() throws(SystemError) {
        try state.withLock { state throws(SystemError) in try Self.write(&state, path: folder) }
    }

    private static func write(_ state: inout State, path: String) throws(SystemError) {
        guard !state.buffered.isEmpty else { return }
        if let failure = FileSystem.writeFully(fd: state.fd, state.buffered, path: Path.join(path, BlobStore.blobName))
        {
            throw failure
        }
        state.buffered.withUnsafeBytes { state.hasher.update(bufferPointer: $0) }
        state.buffered.removeAll(keepingCapacity: true)
    }

    private func commitOnDisk() throws(SystemError) -> Stored {
        try state.withLock { state throws(SystemError) -> Stored in
            try Self.write(&state, path: folder)
            if fsync(state.fd) != 0 { throw SystemError.current("fsync", path: Path.join(folder, BlobStore.blobName)) }
            close(state.fd)
            state.fd = -1
            let sha256 = Hex.encode(state.hasher.finalize())
            let metadata = BlobStore.metadata(
                size: state.size, sha256: sha256, uploadedAt: SystemClock.unixMilliseconds())
            try Self.writeSynced(Path.join(folder, BlobStore.metadataName), Array(metadata.serialized().utf8))
            try FileSystem.syncDirectory(folder)
            // 128 random bits never collide in practice; a folder already there refuses the rename, never replaced.
            var id = BlobID.make()
            while rename(folder, Path.join(storage, id)) != 0 {
                guard errno == EEXIST || errno == ENOTEMPTY else { throw SystemError.current("rename", path: folder) }
                id = BlobID.make()
            }
            state.settled = true
            try FileSystem.syncDirectory(storage)
            return Stored(id: id, size: state.size, sha256: sha256)
        }
    }

    private static func writeSynced(_ path: String, _ bytes: [UInt8]) throws(SystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError.current("create", path: path) }
        defer { close(fd) }
        if let failure = FileSystem.writeFully(fd: fd, bytes, path: path) { throw failure }
        if fsync(fd) != 0 { throw SystemError.current("fsync", path: path) }
    }

    /// Closes the blob and removes the temporary folder, unless the upload was committed.
    private func settle() {
        let (fd, unsettled) = state.withLock { state -> (Int32, Bool) in
            defer {
                state.settled = true
                state.fd = -1
            }
            return (state.fd, !state.settled)
        }
        if fd >= 0 { close(fd) }
        if unsettled { try? FileSystem.removeTree(folder) }
    }
}
