extension OSLogInterpolation {
    /// A `Double`: shown under `.auto`, as Apple shows numbers; written per `format` (`%f` unless it says), padded
    /// per `align`.
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Double, format: OSLogFloatFormatting = .fixed,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendDouble(number, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Double, format: OSLogFloatFormatting = .fixed,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto, attributes: String
    ) {
        appendDouble(number, format: format, align: align, privacy: privacy)
    }

    /// A `Float`, written as the `Double` it converts to (printf promotes it so).
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Float, format: OSLogFloatFormatting = .fixed,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendDouble({ Double(number()) }, format: format, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Float, format: OSLogFloatFormatting = .fixed,
        align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto, attributes: String
    ) {
        appendDouble({ Double(number()) }, format: format, align: align, privacy: privacy)
    }

    private mutating func appendDouble(
        _ number: @escaping () -> Double, format: OSLogFloatFormatting, align: OSLogStringAlignment,
        privacy: OSLogPrivacy
    ) {
        var argument = Argument(
            evaluate: { (format.format(number()), true) }, privacy: privacy, align: align, byteCount: 8)
        argument.hasPrecision = format.precision != nil
        append(argument)
    }
}
