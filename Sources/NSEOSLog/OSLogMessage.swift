/// A log message: a string literal, or a string interpolation whose values carry their privacy and format
/// (`"got \(count, privacy: .public) items"`). Apple's `OSLogMessage`.
///
/// Only a literal makes one: a `String` variable does not convert, so `logger.info(text)` does not compile, as on
/// Apple (write `logger.info("\(text, privacy: .public)")`).
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    public typealias StringInterpolation = OSLogInterpolation
    public typealias StringLiteralType = String

    /// The message's literal text and interpolated values.
    public let interpolation: OSLogInterpolation

    public init(stringInterpolation: OSLogInterpolation) {
        interpolation = stringInterpolation
    }

    public init(stringLiteral value: String) {
        var interpolation = OSLogInterpolation(literalCapacity: 1, interpolationCount: 0)
        interpolation.appendLiteral(value)
        self.interpolation = interpolation
    }

    /// The size in bytes of the argument buffer Apple's `os_log` ABI would be handed for this message: 2 bytes of
    /// header and, per value, 2 bytes plus its own (8 for a string, object or floating-point number, an integer's
    /// width, 4 for a Boolean; 4 for a width or minimum-digits count, 8 for a mask). nse hands no buffer anywhere; the
    /// number is Apple's.
    public var bufferSize: Int { interpolation.totalBytesForSerializingArguments + 2 }
}

/// The most values one message holds: Apple's limit. Values interpolated past it (widths, digit counts and masks
/// count too) are left out of the message, as on Apple.
public var maxOSLogArgumentCount: UInt8 { 48 }
