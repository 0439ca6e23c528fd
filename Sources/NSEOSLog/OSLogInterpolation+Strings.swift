extension OSLogInterpolation {
    /// A string: hidden unless `privacy` is `.public` (`.auto` hides strings).
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        appendString(argumentString, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto, attributes: String
    ) {
        appendString(argumentString, align: align, privacy: privacy)
    }

    /// Any other value with a `description` (`URL`, `UUID`, `Substring`, an enum that adopts
    /// `CustomStringConvertible`…): its description, as a string. A value with no `description` does not compile, as
    /// on Apple.
    @_disfavoredOverload
    public mutating func appendInterpolation<T: CustomStringConvertible>(
        _ value: @autoclosure @escaping () -> T, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        appendString({ value().description }, align: align, privacy: privacy)
    }

    @_disfavoredOverload
    public mutating func appendInterpolation<T: CustomStringConvertible>(
        _ value: @autoclosure @escaping () -> T, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto,
        attributes: String
    ) {
        appendString({ value().description }, align: align, privacy: privacy)
    }

    /// A type (`\(type(of: error))`): its unqualified name, as a string.
    public mutating func appendInterpolation(
        _ value: @autoclosure @escaping () -> any Any.Type, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        appendString({ _typeName(value(), qualified: false) }, align: align, privacy: privacy)
    }

    public mutating func appendInterpolation(
        _ value: @autoclosure @escaping () -> any Any.Type, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto, attributes: String
    ) {
        appendString({ _typeName(value(), qualified: false) }, align: align, privacy: privacy)
    }

    private mutating func appendString(
        _ text: @escaping () -> String, align: OSLogStringAlignment, privacy: OSLogPrivacy
    ) {
        append(Argument(evaluate: { (text(), false) }, privacy: privacy, align: align, byteCount: 8))
    }
}
