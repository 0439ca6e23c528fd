/// How an interpolated `Double` or `Float` is written: Apple's `OSLogFloatFormatting`, printf's `%f`, `%e`, `%g` or
/// `%a` (upper case: `%F`, `%E`, `%G`, `%A`), with an optional precision and `+` sign.
public struct OSLogFloatFormatting {
    enum Notation {
        case hex, fixed, exponential, hybrid
    }

    let explicitPositiveSign: Bool
    let uppercase: Bool
    let precision: (() -> Int)?
    let notation: Notation

    /// `%f`: 6 digits after the point unless `precision` says.
    public static var fixed: OSLogFloatFormatting { .fixed() }

    public static func fixed(
        precision: @autoclosure @escaping () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false
    ) -> OSLogFloatFormatting {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: precision, notation: .fixed)
    }

    public static func fixed(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: nil, notation: .fixed)
    }

    /// `%a`: hexadecimal significand and binary exponent.
    public static var hex: OSLogFloatFormatting { .hex() }

    public static func hex(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: nil, notation: .hex)
    }

    /// `%e`: one digit before the point, an exponent after.
    public static var exponential: OSLogFloatFormatting { .exponential() }

    public static func exponential(
        precision: @autoclosure @escaping () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false
    ) -> OSLogFloatFormatting {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: precision,
            notation: .exponential)
    }

    public static func exponential(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting
    {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: nil, notation: .exponential)
    }

    /// `%g`: `%f` or `%e`, whichever is shorter.
    public static var hybrid: OSLogFloatFormatting { .hybrid() }

    public static func hybrid(
        precision: @autoclosure @escaping () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false
    ) -> OSLogFloatFormatting {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: precision, notation: .hybrid)
    }

    public static func hybrid(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(
            explicitPositiveSign: explicitPositiveSign, uppercase: uppercase, precision: nil, notation: .hybrid)
    }
}

extension OSLogFloatFormatting {
    /// `value` as printf writes the specifier Apple builds (width aside: `OSLogStringAlignment` pads).
    func format(_ value: Double) -> String {
        var flags = explicitPositiveSign ? "+" : ""
        if let precision {
            let digits = precision()
            // printf takes a negative precision as if it were omitted.
            if digits >= 0 { flags += ".\(digits)" }
        }
        let conversion: String
        switch notation {
        case .fixed: conversion = uppercase ? "F" : "f"
        case .exponential: conversion = uppercase ? "E" : "e"
        case .hybrid: conversion = uppercase ? "G" : "g"
        case .hex: conversion = uppercase ? "A" : "a"
        }
        return CFormat.double("%" + flags + conversion, value)
    }
}
