/// A dynamic type: what the system makes for a tag it has no declared type for (`UTType(filenameExtension: "xyz")`).
/// Its identifier carries its tag and its supertype, so the type can be rebuilt from the identifier alone
/// (`UTType("dyn.…")`), as on Apple's platforms.
///
/// The encoding is Apple's: `dyn.a` followed by the text `?0=<supertype>:<tag class>=<tag>` in base 32, five bits a
/// character, most significant first, with the alphabet `abcdefghkmnpqrstuvwxyz0123456789` and no padding. The well-known
/// identifiers inside that text are written as one hex digit (`1` for `public.filename-extension`, `6` for
/// `public.data`, …), so `UTType(filenameExtension: "sql")` is `dyn.ah62d4rv4ge81g6pq` here as there. Only
/// `UTTypeConformsTo` and tag pairs are encoded; a tag holding `:` or `=` cannot be (the text has no escape for them).
struct DynamicType: Equatable, Sendable {
    /// The supertype's identifier, if the type was made to conform to one.
    let conformsTo: String?
    /// The tag class (`public.filename-extension`, `public.mime-type`, or any other) and the tag.
    let tagClass: String
    let tag: String

    init?(tag: String, tagClass: String, conformsTo: String?) {
        guard !tag.isEmpty, Self.isEncodable(tag), Self.isEncodable(tagClass),
            conformsTo.map(Self.isEncodable) ?? true
        else { return nil }
        self.tag = tag
        self.tagClass = tagClass
        self.conformsTo = conformsTo
    }

    /// The type a `dyn.a…` identifier encodes, or `nil` if `identifier` is not one or does not decode to a tag.
    init?(identifier: String) {
        let characters = Array(CoreTypes.lowercased(identifier).utf8)
        guard characters.count > Self.prefix.count, characters.starts(with: Self.prefix),
            let bytes = Self.base32Decoded(characters.dropFirst(Self.prefix.count)),
            let text = String(validating: bytes, as: UTF8.self), text.first == "?"
        else { return nil }
        var conformsTo: String?
        var tag: (tagClass: String, tag: String)?
        for component in text.dropFirst().split(separator: ":", omittingEmptySubsequences: false) {
            guard let equals = component.firstIndex(of: "=") else { return nil }
            let key = Self.expanded(String(component[..<equals]))
            let value = String(component[component.index(after: equals)...])
            if key == Self.conformsToKey {
                conformsTo = Self.expanded(value)
            } else if tag == nil {
                tag = (key, value)
            }
        }
        guard let tag, !tag.tag.isEmpty else { return nil }
        self.conformsTo = conformsTo
        self.tagClass = tag.tagClass
        self.tag = tag.tag
    }

    /// The `dyn.a…` identifier.
    var identifier: String {
        var components: [String] = []
        if let conformsTo { components.append("0=" + Self.abbreviated(conformsTo)) }
        components.append(Self.abbreviated(tagClass) + "=" + tag)
        let text = "?" + components.joined(separator: ":")
        return String(decoding: Self.prefix + Self.base32Encoded(Array(text.utf8)), as: UTF8.self)
    }

    // MARK: - The encoding

    private static let prefix = Array("dyn.a".utf8)
    private static let alphabet = Array("abcdefghkmnpqrstuvwxyz0123456789".utf8)
    private static let conformsToKey = "UTTypeConformsTo"
    /// The identifiers written as one hex digit, by that digit's value.
    private static let abbreviations = [
        conformsToKey, "public.filename-extension", "com.apple.ostype", "public.mime-type",
        "com.apple.nspboard-type", "public.url-scheme", "public.data", "public.text", "public.plain-text",
        "public.utf16-plain-text", "com.apple.traditional-mac-plain-text", "public.image", "public.video",
        "public.audio", "public.directory", "public.folder",
    ]
    private static let hexDigits = Array("0123456789ABCDEF")

    private static func isEncodable(_ text: String) -> Bool {
        !text.contains(":") && !text.contains("=")
    }

    private static func abbreviated(_ identifier: String) -> String {
        let key = CoreTypes.lowercased(identifier)
        guard let index = abbreviations.firstIndex(where: { CoreTypes.lowercased($0) == key }) else {
            return identifier
        }
        return String(hexDigits[index])
    }

    private static func expanded(_ text: String) -> String {
        guard text.count == 1, let index = hexDigits.firstIndex(of: Character(text.uppercased())) else { return text }
        return abbreviations[index]
    }

    private static func base32Encoded(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt32(bits) & 0x1F)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt32(5 - bits) & 0x1F)]) }
        return output
    }

    /// The bytes, or `nil` for a character outside the alphabet or left-over bits that are not zero (which no
    /// encoder writes).
    private static func base32Decoded(_ characters: ArraySlice<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in characters {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> UInt32(bits) & 0xFF))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        return buffer == 0 ? output : nil
    }
}
