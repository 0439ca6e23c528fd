public import NSEJSON

extension Plaintext {
    /// A file a message carries by reference (docs/envelope.md, "Attachments"): encrypted with its own key
    /// (`crypto_secretstream_xchacha20poly1305`, 64 KiB chunks), uploaded to a file server, and named here with what
    /// the receiver needs to fetch, check and open it. The fields of liblinphone's file-transfer body
    /// (`application/vnd.gsma.rcs-ft-http+xml`: content-type, file-name, file-size, data url, file-key), plus the
    /// encrypted file's SHA-256.
    public struct Attachment: Sendable, Equatable {
        /// The plaintext file's MIME type (`image/jpeg`).
        public var contentType: String
        public var name: String
        /// The plaintext file's size in bytes.
        public var size: Int64
        /// Where the encrypted file is (`http` or `https`).
        public var url: String
        /// The file's 32-byte key, base64 (standard alphabet).
        public var key: String
        /// The SHA-256 of the encrypted file, 64 hex digits.
        public var sha256: String
        /// A voice note's length, in seconds.
        public var duration: Double?

        public init(
            contentType: String, name: String, size: Int64, url: String, key: String, sha256: String,
            duration: Double? = nil
        ) {
            self.contentType = contentType
            self.name = name
            self.size = size
            self.url = url
            self.key = key
            self.sha256 = sha256
            self.duration = duration
        }

        /// The most a message carries.
        public static let limit = 8
        /// The largest file a message may name (an iOS movie attachment is 50 MB at most).
        public static let maximumSize: Int64 = 1 << 30

        public var json: JSON {
            var object: JSONObject = [
                "content_type": .string(contentType), "name": .string(name), "size": .int(size), "url": .string(url),
                "key": .string(key), "sha256": .string(sha256),
            ]
            if let duration { object["duration"] = .double(duration) }
            return .object(object)
        }

        /// Reads and checks one attachment (`index` for the messages).
        init(_ value: JSON, index: Int) throws(PlaintextError) {
            let path = "attachments[\(index)]"
            guard let object = value.objectValue else {
                throw PlaintextError(.schema, "\"\(path)\" is a \(value.typeName), not an object")
            }
            func string(_ key: String, limit: Int) throws(PlaintextError) -> String {
                guard let field = object[key] else { throw PlaintextError(.schema, "\"\(path)\" has no \"\(key)\"") }
                guard let text = field.stringValue else {
                    throw PlaintextError(.schema, "\"\(path).\(key)\" is a \(field.typeName), not a string")
                }
                guard !text.isEmpty, text.utf8.count <= limit else {
                    throw PlaintextError(.schema, "\"\(path).\(key)\" must have 1 to \(limit) bytes")
                }
                return text
            }
            contentType = try string("content_type", limit: 127)
            guard Self.isMIMEType(contentType) else {
                throw PlaintextError(.schema, "\"\(path).content_type\" is not a MIME type (type/subtype)")
            }
            name = try string("name", limit: 255)
            guard !name.utf8.contains(where: { $0 == 0x2F || $0 == 0x5C || $0 < 0x20 }), name != ".", name != ".."
            else {
                throw PlaintextError(
                    .schema, "\"\(path).name\" must be a file name, without a path or control characters")
            }
            guard let sizeValue = object["size"], let size = sizeValue.intValue, size >= 0, size <= Self.maximumSize
            else {
                throw PlaintextError(.schema, "\"\(path).size\" must be a whole number of bytes, up to 1 GiB")
            }
            self.size = size
            url = try string("url", limit: 2048)
            let lowered = url.lowercased()
            guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://"),
                !url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F })
            else {
                throw PlaintextError(.schema, "\"\(path).url\" must be an http or https URL")
            }
            key = try string("key", limit: 64)
            // 32 bytes in standard base64: 43 characters and one `=`.
            guard key.utf8.count == 44, key.utf8.last == 0x3D,
                key.utf8.dropLast().allSatisfy({ byte in
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                        || byte == 0x2B || byte == 0x2F
                })
            else {
                throw PlaintextError(.schema, "\"\(path).key\" must be a 32-byte key in base64")
            }
            sha256 = try string("sha256", limit: 64)
            guard sha256.utf8.count == 64, sha256.utf8.allSatisfy(Self.isHexDigit) else {
                throw PlaintextError(.schema, "\"\(path).sha256\" must be 64 hex digits")
            }
            if let value = object["duration"], !value.isNull {
                guard let seconds = value.doubleValue, seconds >= 0, seconds.isFinite else {
                    throw PlaintextError(.schema, "\"\(path).duration\" must be a number of seconds")
                }
                duration = seconds
            }
        }

        static func isMIMEType(_ text: String) -> Bool {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return false }
            let token: (Substring) -> Bool = { part in
                !part.isEmpty
                    && part.utf8.allSatisfy { byte in
                        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                            || Array("!#$&-^_.+".utf8).contains(byte)
                    }
            }
            return token(parts[0]) && token(parts[1].split(separator: ";").first ?? "")
        }

        static func isHexDigit(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
        }
    }
}
