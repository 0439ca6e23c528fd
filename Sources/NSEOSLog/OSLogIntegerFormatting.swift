/// How an interpolated integer is written: Apple's `OSLogIntegerFormatting` (radix, sign, prefix, case, minimum
/// digits), with printf's meaning, as Apple builds a `%{…}…d`/`x`/`o` specifier from it.
///
/// Apple rejects `.hex` and `.octal` for a signed integer at compile time ("Signed integers must be formatted using
/// .decimal"); nse cannot see the value's format at compile time, and stops with the same message when such a message
/// is written.
public struct OSLogIntegerFormatting {
    let radix: Int
    let explicitPositiveSign: Bool
    let includePrefix: Bool
    let uppercase: Bool
    let minDigits: (() -> Int)?

    /// Base 10, `-` for negative values; `explicitPositiveSign` writes `+` before others.
    public static func decimal(explicitPositiveSign: Bool = false) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(
            radix: 10, explicitPositiveSign: explicitPositiveSign, includePrefix: false, uppercase: false,
            minDigits: nil)
    }

    /// Base 10, with leading zeros up to `minDigits` digits.
    public static func decimal(
        explicitPositiveSign: Bool = false, minDigits: @autoclosure @escaping () -> Int
    ) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(
            radix: 10, explicitPositiveSign: explicitPositiveSign, includePrefix: false, uppercase: false,
            minDigits: minDigits)
    }

    public static var decimal: OSLogIntegerFormatting { .decimal() }

    /// Base 16, unsigned integers only; `includePrefix` writes `0x`, `uppercase` the digits A–F.
    public static func hex(
        explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false
    ) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(
            radix: 16, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase,
            minDigits: nil)
    }

    /// Base 16 with leading zeros up to `minDigits` digits.
    public static func hex(
        explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false,
        minDigits: @autoclosure @escaping () -> Int
    ) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(
            radix: 16, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase,
            minDigits: minDigits)
    }

    public static var hex: OSLogIntegerFormatting { .hex() }

    /// Base 8, unsigned integers only; `includePrefix` writes `0o`.
    public static func octal(
        explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false
    ) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(
            radix: 8, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase,
            minDigits: nil)
    }

    /// Base 8 with leading zeros up to `minDigits` digits.
    public static func octal(
        explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false,
        minDigits: @autoclosure @escaping () -> Int
    ) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(
            radix: 8, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase,
            minDigits: minDigits)
    }

    public static var octal: OSLogIntegerFormatting { .octal() }
}

extension OSLogIntegerFormatting {
    /// The literal text Apple puts before the `%` specifier, outside the value's privacy: `+` for an unsigned value
    /// with `explicitPositiveSign`, then `0x` or `0o` with `includePrefix`.
    func prefix<T: FixedWidthInteger>(for type: T.Type) -> String {
        let sign = explicitPositiveSign && !T.isSigned ? "+" : ""
        guard includePrefix else { return sign }
        switch radix {
        case 16: return sign + "0x"
        case 8: return sign + "0o"
        default: return sign
        }
    }

    /// The value's digits as printf writes `%+.*d`, `%.*x`, `%.*o` (the specifier Apple builds).
    func digits<T: FixedWidthInteger>(_ value: T) -> String {
        if T.isSigned && radix != 10 {
            fatalError("Signed integers must be formatted using .decimal")
        }
        let minimum = minDigits?() ?? 1
        // printf: a negative precision is taken as if omitted; a zero value with a zero precision writes no digits.
        var digits = minimum == 0 && value == 0 ? "" : String(value.magnitude, radix: radix, uppercase: uppercase)
        if minimum > digits.count { digits = String(repeating: "0", count: minimum - digits.count) + digits }
        if value < 0 { return "-" + digits }
        return explicitPositiveSign && T.isSigned ? "+" + digits : digits
    }
}
