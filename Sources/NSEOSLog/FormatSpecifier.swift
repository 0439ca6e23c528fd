import Foundation

/// One conversion: `%` `{decorations}` flags width `.precision` length conversion.
struct FormatSpecifier {
    enum Count {
        case fixed(Int)
        /// `*`: the next argument.
        case argument
    }

    var decorations: [String] = []
    var flags = ""
    var width: Count?
    var precision: Count?
    var length = ""
    var conversion: UInt8 = 0
    /// The index just past the specifier.
    var end = 0

    /// Parses the specifier at `start` (a `%`); `nil` when the format ends before its conversion.
    init?(_ bytes: [UInt8], at start: Int) {
        var index = start + 1
        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
        if peek() == UInt8(ascii: "{") {
            guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "}")) else { return nil }
            decorations = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            index = close + 1
        }
        while let byte = peek(), "-+ #0'".utf8.contains(byte) {
            flags.unicodeScalars.append(Unicode.Scalar(byte))
            index += 1
        }
        width = Self.count(bytes, &index)
        if peek() == UInt8(ascii: ".") {
            index += 1
            precision = Self.count(bytes, &index) ?? .fixed(0)
        }
        while let byte = peek(), "hlLqjzt".utf8.contains(byte) {
            length.unicodeScalars.append(Unicode.Scalar(byte))
            index += 1
        }
        guard let conversion = peek() else { return nil }
        self.conversion = conversion
        end = index + 1
    }

    private static func count(_ bytes: [UInt8], _ index: inout Int) -> Count? {
        if index < bytes.count, bytes[index] == UInt8(ascii: "*") {
            index += 1
            return .argument
        }
        var value = 0
        var digits = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            value = value &* 10 &+ Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        return digits > 0 ? .fixed(value) : nil
    }
}
