/// A classic `os_log` format: printf conversions, each optionally decorated with os_log's `{…}` (privacy: `public`,
/// `private`, `sensitive`, `mask.hash`; decoders: `bool`, `BOOL`), rendered from Swift values without C varargs.
///
/// Apple's log tools render a format with printf's conversions; nse does the same per conversion (`FormatSpecifier`),
/// except where a Swift value is not what C would read: an integer is written from its value (`%d` of an `Int` past
/// 2³¹ is the whole number, where Darwin writes its low 32 bits; a negative value under `%u`/`%x`/`%o` is the two's
/// complement at the length modifier's width, as in C); a value of another kind than its conversion (a string for
/// `%d`) is written as its description, and hidden like a string; `%P` (pointer data), `%n` and letters that are no
/// conversion are written `<decode: unsupported %P>`; a conversion with no argument left is
/// `<decode: missing data>`, as on Apple. Apple's other decoders (`time_t`, `errno`, `uuid_t`, `network:…`,
/// `bytes`…) are not applied: the plain value is written.
struct FormatString {
    let bytes: [UInt8]

    init(_ format: String) {
        bytes = Array(format.utf8)
    }

    /// The message with each conversion replaced by its argument as the log shows it. `errno`: for `%m`.
    func render(_ arguments: [any CVarArg], errno: Int32) -> String {
        var output = ""
        var remaining = arguments[...]
        var literalStart = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "%") else {
                index += 1
                continue
            }
            output += String(decoding: bytes[literalStart..<index], as: UTF8.self)
            guard let specifier = FormatSpecifier(bytes, at: index) else {
                // A `%` with no conversion after it: the rest is literal text.
                literalStart = index
                break
            }
            output += specifier.render(&remaining, errno: errno)
            index = specifier.end
            literalStart = index
        }
        output += String(decoding: bytes[literalStart...], as: UTF8.self)
        return output
    }
}
