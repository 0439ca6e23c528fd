import NSECrypto
import NSEJSON
import NSEMedia
import NSEPayload

/// An attachment's parts (docs/media.md): the bytes as an encrypted file decrypted with a fixed key, fed whole and in
/// two pieces; as a message plaintext naming attachments; as a download URL; and as an audio or movie file whose length
/// the host reads for the lock screen.
enum MediaTarget {
    /// The fixed key: bytes 1…32. Seeds in `fixtures/fuzz/media/` are encrypted under it.
    static let key: [UInt8] = Array(1...32)

    static func run(_ bytes: [UInt8]) throws(FuzzFinding) {
        try blob(bytes)
        try reference(bytes)
        try url(String(decoding: bytes.prefix(4096), as: UTF8.self))
        try duration(bytes)
    }

    /// A file's length is a finite number of seconds or none, read within the file's bytes, whatever its headers say.
    static func duration(_ bytes: [UInt8]) throws(FuzzFinding) {
        for type in ["public.mp3", "public.mpeg-4-audio"] {
            var outside = false
            let seconds = MediaDuration.seconds(type: type, size: bytes.count) { offset, count in
                guard offset >= 0, count >= 0, offset + count <= bytes.count else {
                    outside = true
                    return []
                }
                return Array(bytes[offset..<offset + count])
            }
            if outside { throw FuzzFinding(.media, "a length was read from outside the file") }
            if let seconds, !(seconds.isFinite && seconds >= 0) {
                throw FuzzFinding(.media, "a file's length is not a finite number of seconds")
            }
        }
    }

    /// Decrypting in any pieces gives what decrypting whole gives: the same plaintext, or the same failure.
    static func blob(_ bytes: [UInt8]) throws(FuzzFinding) {
        let split = bytes.count >= 2 ? (Int(bytes[0]) << 8 | Int(bytes[1])) % (bytes.count + 1) : 0
        let whole = decrypt([bytes[...]])
        let pieces = decrypt([bytes[..<split], bytes[split...]])
        guard whole == pieces else {
            throw FuzzFinding(.media, "a file decrypts differently in two pieces than whole")
        }
        if case .failure(let failure) = whole {
            try FuzzCheck.oneLine(failure, .media, "a decryption failure")
        }
    }

    /// A decryption's end: the plaintext, or the failure's words.
    private enum Decrypted: Equatable {
        case success([UInt8])
        case failure(String)
    }

    private static func decrypt(_ pieces: [ArraySlice<UInt8>]) -> Decrypted {
        do {
            var decryptor = try MediaDecryptor(key: key)
            var plaintext: [UInt8] = []
            for piece in pieces {
                try piece.withUnsafeBytes { try decryptor.take($0) { plaintext.append(contentsOf: $0) } }
            }
            let digest = try decryptor.finish { plaintext.append(contentsOf: $0) }
            return digest.count == 32 ? .success(plaintext) : .failure("a digest of \(digest.count) bytes")
        } catch {
            return .failure("\(error)")
        }
    }

    /// A plaintext's attachments read back from their own JSON to themselves.
    static func reference(_ bytes: [UInt8]) throws(FuzzFinding) {
        let plaintext: Plaintext
        do { plaintext = try Plaintext(bytes) } catch {
            try FuzzCheck.oneLine(error.description, .media, "a plaintext error")
            return
        }
        guard case .message(let message) = plaintext, !message.attachments.isEmpty else { return }
        guard message.attachments.count <= Plaintext.Attachment.limit else {
            throw FuzzFinding(.media, "a message with more attachments than the limit was accepted")
        }
        let document: JSON = [
            "type": "message", "from": .string(message.from), "text": .string(message.text),
            "attachments": .array(message.attachments.map(\.json)),
        ]
        guard case .message(let again)? = try? Plaintext(document.serializedBytes()),
            again.attachments == message.attachments
        else {
            throw FuzzFinding(.media, "an accepted attachment does not read back from its own JSON")
        }
    }

    /// A URL that parses rebuilds from its parts to the same parts.
    static func url(_ text: String) throws(FuzzFinding) {
        guard let url = MediaURL(text) else { return }
        let rebuilt = (url.secure ? "https://" : "http://") + url.hostHeader + url.target
        guard let again = MediaURL(rebuilt), again == url else {
            throw FuzzFinding(.media, "a parsed URL does not rebuild from its host, port and target")
        }
    }
}
