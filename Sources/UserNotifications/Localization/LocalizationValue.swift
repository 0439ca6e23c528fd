public import Foundation

extension String {
    /// Foundation's localizable string (iOS 15), which Foundation on Linux does not have: the text written with
    /// `String(localized:)`, its interpolations turned into format specifiers to make the key (`"\(count) new"` is
    /// `"%lld new"`) and kept as the arguments the localized format takes.
    public struct LocalizationValue: Equatable, Sendable, ExpressibleByStringInterpolation {
        /// One interpolated value, by the specifier Apple writes for its type.
        enum Argument: Equatable, Sendable {
            case object(String)
            case signed(Int64)
            case unsigned(UInt64)
            case double(Double)
        }

        /// The key: the literal text, `%` doubled, each interpolation its specifier.
        let key: String
        let arguments: [Argument]

        public init(_ value: String) {
            key = value.replacing("%", with: "%%")
            arguments = []
        }

        public init(stringLiteral value: String) {
            self.init(value)
        }

        public init(stringInterpolation: StringInterpolation) {
            key = stringInterpolation.key
            arguments = stringInterpolation.arguments
        }

        public struct StringInterpolation: StringInterpolationProtocol, Sendable {
            var key = ""
            var arguments: [Argument] = []

            public init(literalCapacity: Int, interpolationCount: Int) {
                key.reserveCapacity(literalCapacity + 4 * interpolationCount)
            }

            public mutating func appendLiteral(_ literal: String) {
                key += literal.replacing("%", with: "%%")
            }

            public mutating func appendInterpolation(_ string: String) {
                append("%@", .object(string))
            }

            public mutating func appendInterpolation<Subject: NSObject>(_ object: Subject) {
                append("%@", .object(object.description))
            }

            public mutating func appendInterpolation<Value: BinaryInteger>(_ value: Value) {
                if Value.isSigned {
                    append("%lld", .signed(Int64(truncatingIfNeeded: value)))
                } else {
                    append("%llu", .unsigned(UInt64(truncatingIfNeeded: value)))
                }
            }

            public mutating func appendInterpolation(_ value: Double) {
                append("%lf", .double(value))
            }

            public mutating func appendInterpolation(_ value: Float) {
                append("%f", .double(Double(value)))
            }

            /// A value shown in a format style (`"\(date, format: .dateTime.hour())"`): its text.
            public mutating func appendInterpolation<Style: FormatStyle>(_ input: Style.FormatInput, format: Style)
            where Style.FormatOutput == String {
                append("%@", .object(format.format(input)))
            }

            private mutating func append(_ specifier: String, _ argument: Argument) {
                key += specifier
                arguments.append(argument)
            }
        }
    }

    /// The localized string for `keyAndValue` in `table` of `bundle` (`Localizable`, `Bundle.main`), its arguments
    /// put in; the text as written when the table has no such key, as on iOS.
    public init(
        localized keyAndValue: LocalizationValue, table: String? = nil, bundle: Bundle? = nil,
        locale: Locale = .current, comment: StaticString? = nil
    ) {
        let format = (bundle ?? .main).localizedString(forKey: keyAndValue.key, value: keyAndValue.key, table: table)
        self = LocalizedFormat.render(format, keyAndValue.arguments, locale: locale)
    }

    /// The localized string for `key`; `defaultValue` (its arguments put in) when the table has none.
    public init(
        localized key: StaticString, defaultValue: LocalizationValue, table: String? = nil, bundle: Bundle? = nil,
        locale: Locale = .current, comment: StaticString? = nil
    ) {
        let name = key.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        let format = (bundle ?? .main).localizedString(forKey: name, value: defaultValue.key, table: table)
        self = LocalizedFormat.render(format, defaultValue.arguments, locale: locale)
    }
}
