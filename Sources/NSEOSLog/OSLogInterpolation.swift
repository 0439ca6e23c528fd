/// The literal text and interpolated values of an `OSLogMessage`: Apple's `OSLogInterpolation`.
///
/// Its `appendInterpolation` overloads (in the `OSLogInterpolation+…` files) are Apple's: strings, any
/// `CustomStringConvertible`, each integer type, `Double` and `Float`, `Bool`, `NSObject`, errors and metatypes, each
/// with Apple's labels and defaults. Every value is an `@autoclosure`: it is evaluated when the message is written,
/// never for a message whose level is not (`NSE_OSLOG_LEVEL`), as on Apple.
///
/// The `attributes:` parameters are Apple's tags for value decoders in its log tools; nse shows the value as Apple's
/// log does without a decoder for the tag, unchanged.
public struct OSLogInterpolation: StringInterpolationProtocol {
    public typealias StringLiteralType = String

    enum Segment {
        case literal(String)
        case value(Argument)
    }

    /// One interpolated value, formatted when the message is written.
    struct Argument {
        /// Literal text before the value, outside its privacy: Apple writes an integer's `0x` before the `%`.
        var prefix = ""
        /// The value as text, and whether `.auto` shows it (a number, a Boolean, a nil object's `(null)`): evaluates
        /// the developer's autoclosure.
        let evaluate: () -> (text: String, isScalar: Bool)
        let privacy: OSLogPrivacy
        let align: OSLogStringAlignment
        /// The bytes the value itself takes in Apple's argument buffer (`OSLogMessage.bufferSize`).
        let byteCount: Int
        /// Whether Apple passes a count (an integer's minimum digits, a float's precision) before the value.
        var hasPrecision = false
    }

    private(set) var segments: [Segment] = []
    /// Apple's count of arguments in its buffer: a value, and its width, mask and precision when it has them.
    private(set) var argumentCount: UInt8 = 0
    private(set) var totalBytesForSerializingArguments = 0

    public init(literalCapacity: Int, interpolationCount: Int) {
        segments.reserveCapacity(2 * interpolationCount + 1)
    }

    public mutating func appendLiteral(_ literal: String) {
        segments.append(.literal(literal))
    }

    /// Adds a value, or nothing once the message holds `maxOSLogArgumentCount` arguments (Apple drops the rest).
    mutating func append(_ argument: Argument) {
        guard argumentCount < maxOSLogArgumentCount else { return }
        var count: UInt8 = 1
        var bytes = argument.byteCount + 2
        if argument.align.minimumColumnWidth != nil {
            count += 1
            bytes += 4 + 2
        }
        if argument.privacy.mask != .none {
            count += 1
            bytes += 8 + 2
        }
        if argument.hasPrecision {
            count += 1
            bytes += 4 + 2
        }
        argumentCount += count
        totalBytesForSerializingArguments += bytes
        segments.append(.value(argument))
    }

    /// The message as the log shows it: literals as written, each value formatted, hidden per its privacy, padded.
    func render() -> String {
        var message = ""
        for segment in segments {
            switch segment {
            case .literal(let text):
                message += text
            case .value(let argument):
                let value = argument.evaluate()
                let shown = argument.privacy.display(value.text, isScalar: value.isScalar)
                message += argument.prefix + argument.align.pad(shown)
            }
        }
        return message
    }
}
