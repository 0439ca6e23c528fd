extension OSLogInterpolation {
    /// An integer: shown under `.auto`, as Apple shows numbers. `format` picks the radix, sign, prefix and minimum
    /// digits (`.hex` and `.octal` are for unsigned integers, as on Apple); `align` pads it.
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int8, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int16, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int32, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int64, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> UInt, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> UInt8, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> UInt16, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> UInt32, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> UInt64, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    /// Any fixed-width integer, with Apple's decoder `attributes`.
    public mutating func appendInterpolation<T: FixedWidthInteger>(
        _ number: @autoclosure @escaping () -> T, format: OSLogIntegerFormatting = .decimal,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto, attributes: String
    ) {
        appendInteger(number, format: format, align: align, privacy: privacy)
    }

    private mutating func appendInteger<T: FixedWidthInteger>(
        _ number: @escaping () -> T, format: OSLogIntegerFormatting, align: OSLogStringAlignment,
        privacy: OSLogPrivacy
    ) {
        var argument = Argument(
            evaluate: { (format.digits(number()), true) }, privacy: privacy, align: align, byteCount: T.bitWidth / 8)
        argument.prefix = format.prefix(for: T.self)
        argument.hasPrecision = format.minDigits != nil
        append(argument)
    }
}
