import Foundation

/// A localized format with `String.LocalizationValue`'s arguments put in: `%@`, the integer and floating-point
/// conversions, and positions (`%2$@`), which a translation uses to reorder them. Not `String(format:)`, whose `%@`
/// takes an object Swift on Linux cannot pass as a `CVarArg`.
enum LocalizedFormat {
    static func render(_ format: String, _ arguments: [String.LocalizationValue.Argument], locale: Locale) -> String {
        var output = ""
        var next = 0
        var rest = Substring(format)
        while let percent = rest.firstIndex(of: "%") {
            output += rest[..<percent]
            var cursor = rest.index(after: percent)
            guard cursor < rest.endIndex else {
                output += "%"
                rest = rest[cursor...]
                break
            }
            if rest[cursor] == "%" {
                output += "%"
                rest = rest[rest.index(after: cursor)...]
                continue
            }
            // An optional position, `n$`.
            var position: Int?
            let digits = rest[cursor...].prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty, rest[digits.endIndex...].first == "$" {
                position = Int(digits).map { $0 - 1 }
                cursor = rest.index(after: digits.endIndex)
            }
            // Flags, width and precision, and the length modifiers, then the conversion.
            let spec = rest[cursor...].prefix { "-+ #0123456789.lhqLzjt".contains($0) }
            let conversionIndex = spec.endIndex
            guard conversionIndex < rest.endIndex else {
                output += rest[percent...]
                rest = rest[rest.endIndex...]
                break
            }
            let conversion = rest[conversionIndex]
            let index = position ?? next
            next = index + 1
            let written = rest[percent...conversionIndex]
            rest = rest[rest.index(after: conversionIndex)...]
            guard arguments.indices.contains(index) else {
                output += written
                continue
            }
            output += text(arguments[index], conversion: conversion, flags: String(spec), locale: locale)
        }
        return output + rest
    }

    private static func text(
        _ argument: String.LocalizationValue.Argument, conversion: Character, flags: String, locale: Locale
    ) -> String {
        // The flags without the length modifiers, which Swift's numbers make unneeded.
        let shape = flags.filter { !"lhqLzjt".contains($0) }
        switch (argument, conversion) {
        case (.object(let text), _): return text
        case (.signed(let value), "d"), (.signed(let value), "i"):
            return String(format: "%\(shape)lld", locale: locale, value)
        case (.unsigned(let value), "u"), (.unsigned(let value), "d"), (.unsigned(let value), "i"):
            return String(format: "%\(shape)llu", locale: locale, value)
        case (.signed(let value), "u"): return String(format: "%\(shape)llu", locale: locale, UInt64(bitPattern: value))
        case (.double(let value), "f"), (.double(let value), "F"), (.double(let value), "e"),
            (.double(let value), "g"):
            return String(format: "%\(shape)\(conversion)", locale: locale, value)
        case (.signed(let value), _): return String(value)
        case (.unsigned(let value), _): return String(value)
        case (.double(let value), _): return String(value)
        }
    }
}
