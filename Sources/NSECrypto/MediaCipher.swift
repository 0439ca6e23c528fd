import CSodium
import NSESystem

#if canImport(Glibc)
    import Glibc
#endif

/// An attachment's file encryption (docs/envelope.md, "Attachments"): libsodium's `crypto_secretstream_xchacha20poly1305`
/// over 64 KiB chunks, each authenticated on its own, the last one tagged final, so a reader decrypts as bytes arrive
/// and holds one chunk at a time, and a truncated or reordered file fails. The blob is the 24-byte stream header then
/// the chunks, each 17 bytes longer than its plaintext; a key is used for one file only.
public enum MediaCipher {
    /// Plaintext bytes per chunk.
    public static let chunkSize = 64 * 1024
    public static let keyBytes = Int(crypto_secretstream_xchacha20poly1305_KEYBYTES)
    public static let headerBytes = Int(crypto_secretstream_xchacha20poly1305_HEADERBYTES)
    /// What each chunk adds: its tag byte and its Poly1305 authenticator.
    public static let chunkOverhead = Int(crypto_secretstream_xchacha20poly1305_ABYTES)

    /// A new random key for one file.
    public static func makeKey() throws(CryptoError) -> [UInt8] {
        try Sodium.ensureInitialized()
        var key = [UInt8](repeating: 0, count: keyBytes)
        crypto_secretstream_xchacha20poly1305_keygen(&key)
        return key
    }

    /// The blob's size for a plaintext of `size` bytes (an empty file is one empty final chunk).
    public static func ciphertextSize(plaintextSize size: Int64) -> Int64 {
        let chunks = max(1, (size + Int64(chunkSize) - 1) / Int64(chunkSize))
        return Int64(headerBytes) + size + chunks * Int64(chunkOverhead)
    }
}

/// Encrypts one file's bytes in order: ``header`` first, then ``encrypt(_:final:)`` per chunk of at most
/// ``MediaCipher/chunkSize`` bytes, the last one `final`.
public struct MediaEncryptor: ~Copyable {
    /// On the heap, so that `deinit` can wipe it.
    private let state = UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>.allocate(capacity: 1)
    public private(set) var header: [UInt8]

    public init(key: [UInt8]) throws(CryptoError) {
        try Sodium.ensureInitialized()
        guard key.count == MediaCipher.keyBytes else {
            throw CryptoError(code: .invalidKey, description: "a media key is \(MediaCipher.keyBytes) bytes")
        }
        var header = [UInt8](repeating: 0, count: MediaCipher.headerBytes)
        guard crypto_secretstream_xchacha20poly1305_init_push(state, &header, key) == 0 else {
            throw CryptoError(code: .invalidKey, description: "libsodium refused the media key")
        }
        self.header = header
    }

    /// One chunk's ciphertext.
    public mutating func encrypt(_ chunk: UnsafeRawBufferPointer, final: Bool) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: chunk.count + MediaCipher.chunkOverhead)
        let tag = UInt8(
            final ? crypto_secretstream_xchacha20poly1305_TAG_FINAL : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE)
        _ = crypto_secretstream_xchacha20poly1305_push(
            state, &output, nil, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(chunk.count), nil, 0,
            tag)
        return output
    }

    deinit {
        sodium_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        state.deallocate()
    }
}

/// Decrypts a blob as its bytes arrive, in pieces of any size: whole chunks go to `output` as soon as they are in,
/// the SHA-256 of every byte taken is kept to compare with the sender's. At most one chunk is held.
public struct MediaDecryptor: ~Copyable {
    /// Why a blob is refused. Never quotes its bytes.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// A chunk does not authenticate: the wrong key, a flipped byte, chunks out of order.
        case corrupt(chunk: Int)
        /// Bytes after the final chunk.
        case trailingBytes
        /// The blob ended before its final chunk (or before its header).
        case truncated(received: Int64)

        public var description: String {
            switch self {
            case .corrupt(let chunk): "chunk \(chunk) does not authenticate (wrong key, altered or reordered bytes)"
            case .trailingBytes: "bytes follow the final chunk"
            case .truncated(let received): "the file ends after \(received) bytes, before its final chunk"
            }
        }
    }

    private let state = UnsafeMutablePointer<crypto_secretstream_xchacha20poly1305_state>.allocate(capacity: 1)
    private var hash = StreamingSHA256()
    private let key: [UInt8]
    private var pending: [UInt8] = []
    /// One chunk's plaintext, reused chunk after chunk and wiped after each.
    private var plaintext = [UInt8](repeating: 0, count: MediaCipher.chunkSize)
    private var started = false
    private var finished = false
    private var chunks = 0
    /// Ciphertext bytes taken so far.
    public private(set) var received: Int64 = 0

    public init(key: [UInt8]) throws(CryptoError) {
        try Sodium.ensureInitialized()
        guard key.count == MediaCipher.keyBytes else {
            throw CryptoError(code: .invalidKey, description: "a media key is \(MediaCipher.keyBytes) bytes")
        }
        self.key = key
        pending.reserveCapacity(MediaCipher.chunkSize + MediaCipher.chunkOverhead)
    }

    /// Takes the next bytes of the blob; each chunk decrypted goes to `output` (plaintext valid during the call).
    public mutating func take(_ bytes: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        guard !bytes.isEmpty else { return }
        if finished { throw Failure.trailingBytes }
        received += Int64(bytes.count)
        hash.update(bytes)
        var rest = bytes[...]
        while !rest.isEmpty {
            if finished { throw Failure.trailingBytes }
            let target = started ? MediaCipher.chunkSize + MediaCipher.chunkOverhead : MediaCipher.headerBytes
            let piece = rest.prefix(target - pending.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: piece))
            rest = rest.dropFirst(piece.count)
            if pending.count == target { try consumePending(output: output) }
        }
    }

    /// The blob is complete: the last (short) chunk is decrypted, it must be the final one; returns the SHA-256 of
    /// the blob.
    public mutating func finish(output: (UnsafeRawBufferPointer) throws -> Void) throws -> [UInt8] {
        if !finished, started, pending.count >= MediaCipher.chunkOverhead {
            try consumePending(output: output)
        }
        guard finished else { throw Failure.truncated(received: received) }
        return hash.finish()
    }

    /// `pending` holds the header or one whole chunk (or, at the end, the last short one).
    private mutating func consumePending(output: (UnsafeRawBufferPointer) throws -> Void) throws {
        if !started {
            guard crypto_secretstream_xchacha20poly1305_init_pull(state, pending, key) == 0 else {
                throw Failure.corrupt(chunk: 0)
            }
            started = true
            pending.removeAll(keepingCapacity: true)
            return
        }
        var length: UInt64 = 0
        var tag: UInt8 = 0
        let status = crypto_secretstream_xchacha20poly1305_pull(
            state, &plaintext, &length, &tag, pending, UInt64(pending.count), nil, 0)
        guard status == 0 else { throw Failure.corrupt(chunk: chunks) }
        chunks += 1
        pending.removeAll(keepingCapacity: true)
        if tag == UInt8(crypto_secretstream_xchacha20poly1305_TAG_FINAL) { finished = true }
        defer { sodium_memzero(&plaintext, Int(length)) }
        try plaintext.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[0..<Int(length)])) }
    }

    deinit {
        sodium_memzero(state, MemoryLayout<crypto_secretstream_xchacha20poly1305_state>.size)
        state.deallocate()
    }
}

/// SHA-256 over bytes that come in pieces.
public struct StreamingSHA256 {
    private var state = crypto_hash_sha256_state()

    public init() { crypto_hash_sha256_init(&state) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        crypto_hash_sha256_update(&state, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    public mutating func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        crypto_hash_sha256_final(&state, &digest)
        return digest
    }
}

/// A file encrypted for upload: its key, the blob's SHA-256 and both sizes.
public struct EncryptedMedia: Sendable, Equatable {
    public var key: [UInt8]
    public var sha256: [UInt8]
    public var plaintextSize: Int64
    public var ciphertextSize: Int64
}

extension MediaCipher {
    /// Encrypts the file at `source` into a new file at `destination` under a new key, a chunk at a time.
    public static func encryptFile(at source: String, to destination: String) throws(CryptoError) -> EncryptedMedia {
        do {
            let input = open(source, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw SystemError.current("open", path: source) }
            defer { close(input) }
            let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard output >= 0 else { throw SystemError.current("open", path: destination) }
            defer { close(output) }
            let key = try makeKey()
            var encryptor = try MediaEncryptor(key: key)
            var hash = StreamingSHA256()
            func write(_ bytes: [UInt8]) throws(SystemError) {
                if let failure = FileSystem.writeFully(fd: output, bytes, path: destination) { throw failure }
                bytes.withUnsafeBytes { hash.update($0) }
            }
            // Read in order, not at offsets: the file may be a pipe (`--attach <(…)`).
            func readChunk() throws(SystemError) -> [UInt8] {
                var chunk = [UInt8](repeating: 0, count: chunkSize)
                var filled = 0
                while filled < chunkSize {
                    let count = chunk[filled...].withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    guard count >= 0 else { throw SystemError.current("read", path: source) }
                    if count == 0 { break }
                    filled += count
                }
                chunk.removeLast(chunkSize - filled)
                return chunk
            }
            try write(encryptor.header)
            var size: Int64 = 0
            // One chunk read ahead: the last one is tagged final, even when the size is a multiple of the chunk.
            var current = try readChunk()
            while true {
                let next = current.count == chunkSize ? try readChunk() : []
                let final = next.isEmpty
                size += Int64(current.count)
                try write(current.withUnsafeBytes { encryptor.encrypt($0, final: final) })
                if final { break }
                current = next
            }
            guard fsync(output) == 0 else { throw SystemError.current("fsync", path: destination) }
            return EncryptedMedia(
                key: key, sha256: hash.finish(), plaintextSize: size,
                ciphertextSize: ciphertextSize(plaintextSize: size))
        } catch let error as CryptoError {
            throw error
        } catch {
            throw CryptoError(code: .unavailable, description: "\(error)")
        }
    }
}
