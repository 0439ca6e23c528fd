import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension FormatSpecifier {
    /// What the log shows for this conversion, taking its arguments (width, precision, value) from `arguments`.
    func render(_ arguments: inout ArraySlice<any CVarArg>, errno: Int32) -> String {
        var flags = flags
        var width: Int?
        switch self.width {
        case .fixed(let value): width = value
        case .argument:
            // printf: a negative `*` width is the `-` flag and its absolute value.
            let value = arguments.popFirst().flatMap(Self.integer) ?? 0
            if value < 0 { flags += "-" }
            width = Int(clamping: value.magnitude)
        case nil: break
        }
        var precision: Int?
        switch self.precision {
        case .fixed(let value): precision = value
        case .argument:
            // printf: a negative `*` precision is taken as if it were omitted.
            let value = arguments.popFirst().flatMap(Self.integer) ?? 0
            precision = value < 0 ? nil : Int(clamping: value)
        case nil: break
        }
        let conversion = Character(Unicode.Scalar(self.conversion))
        if conversion == "%" { return "%" }

        guard Self.conversions.contains(conversion) else {
            // Not a printf conversion: no argument is taken.
            return "<decode: unsupported %\(conversion)>"
        }
        let value: Value
        if conversion == "m" {
            value = Value(text: String(cString: strerror(errno)), padded: nil, isScalar: true)
        } else if let argument = arguments.popFirst() {
            value = self.value(argument, conversion, flags: flags, width: width, precision: precision)
        } else {
            return "<decode: missing data>"
        }
        let left = flags.contains("-")
        let privacy = decoration.privacy
        if privacy.shows(isScalar: value.isScalar) {
            return value.padded ?? OSLogStringAlignment.pad(value.text, width: width ?? 0, left: left)
        }
        let hidden = privacy.display(value.text, isScalar: value.isScalar)
        return OSLogStringAlignment.pad(hidden, width: width ?? 0, left: left)
    }

    /// The conversions printf and os_log know; `%P` and `%n` take an argument and are not written.
    static let conversions: Set<Character> = [
        "d", "i", "u", "o", "x", "X", "c", "C", "f", "F", "e", "E", "g", "G", "a", "A", "s", "S", "@", "p", "m",
        "P", "n",
    ]

    /// The `{…}` decorations: privacy and mask, and the Boolean decoders.
    var decoration: (privacy: OSLogPrivacy, bool: OSLogBoolFormat?) {
        var option = OSLogPrivacy.PrivacyOption.auto
        var mask = OSLogPrivacy.Mask.none
        var bool: OSLogBoolFormat?
        for word in decorations {
            switch word {
            case "public": option = .public
            case "private": option = .private
            case "sensitive": option = .sensitive
            case "bool": bool = .truth
            case "BOOL": bool = .answer
            case _ where word.hasPrefix("mask."): mask = .hash
            default: break
            }
        }
        return (OSLogPrivacy(privacy: option, mask: mask), bool)
    }

    /// A conversion's argument as text. `padded`: already written at the width by printf (numbers), or `nil` when the
    /// caller pads `text` with spaces.
    struct Value {
        var text: String
        var padded: String?
        var isScalar: Bool
    }

    private func value(
        _ argument: any CVarArg, _ conversion: Character, flags: String, width: Int?, precision: Int?
    ) -> Value {
        let widthText = width.map(String.init) ?? ""
        let precisionText = precision.map { ".\($0)" } ?? ""
        // A number is written by printf twice: bare for a hidden value's hash, at the width when it is shown.
        func printf(_ body: (String) -> String) -> Value {
            let padded = body("%" + flags + widthText + precisionText)
            return Value(text: body("%" + flags + precisionText), padded: padded, isScalar: true)
        }
        switch conversion {
        case "d", "i", "u", "o", "x", "X", "c", "C":
            guard let number = argument as? any BinaryInteger else { return Self.mismatch(argument) }
            if let bool = decoration.bool {
                return Value(text: bool.format(Int64(clamping: number) != 0), padded: nil, isScalar: true)
            }
            switch conversion {
            case "d", "i":
                if let signed = Int64(exactly: number) {
                    return printf { CFormat.integer($0 + "lld", signed) }
                }
                return printf { CFormat.unsigned($0 + "llu", UInt64(truncatingIfNeeded: number)) }
            case "c", "C":
                let scalar = Unicode.Scalar(UInt32(truncatingIfNeeded: number)) ?? "\u{FFFD}"
                return Value(text: String(Character(scalar)), padded: nil, isScalar: true)
            default:
                let bits = unsignedBits(number)
                return printf { CFormat.unsigned($0 + "ll" + String(conversion), bits) }
            }
        case "f", "F", "e", "E", "g", "G", "a", "A":
            let double: Double
            if let number = argument as? any BinaryFloatingPoint {
                double = Double(number)
            } else if let number = argument as? any BinaryInteger {
                double = Double(number)
            } else {
                return Self.mismatch(argument)
            }
            return printf { CFormat.double($0 + String(conversion), double) }
        case "s", "S", "@":
            var text = Self.string(argument)
            if let precision, conversion != "@" { text = String(text.prefix(precision)) }
            return Value(text: text, padded: nil, isScalar: false)
        case "p":
            guard let address = Self.address(argument) else { return Self.mismatch(argument) }
            return Value(text: "0x" + String(address, radix: 16), padded: nil, isScalar: true)
        default:
            return Value(text: "<decode: unsupported %\(conversion)>", padded: nil, isScalar: true)
        }
    }

    /// A value whose kind is not its conversion's: its description, shown as a scalar only if it is a number.
    private static func mismatch(_ argument: any CVarArg) -> Value {
        if argument is any BinaryInteger || argument is any BinaryFloatingPoint {
            return Value(text: String(describing: argument), padded: nil, isScalar: true)
        }
        return Value(text: string(argument), padded: nil, isScalar: false)
    }

    /// A `%u`/`%o`/`%x` argument's bits: its value, or for a negative one its two's complement at the length
    /// modifier's width (`hh` 8, `h` 16, none 32, `l`/`ll`/`j`/`z`/`t`/`q` 64 bits), as C reads it.
    private func unsignedBits(_ number: some BinaryInteger) -> UInt64 {
        let bits = UInt64(truncatingIfNeeded: number)
        guard number < 0 else { return bits }
        switch length {
        case "hh": return bits & 0xFF
        case "h": return bits & 0xFFFF
        case "": return bits & 0xFFFF_FFFF
        default: return bits
        }
    }

    /// A `*` width or precision argument.
    private static func integer(_ argument: any CVarArg) -> Int64? {
        (argument as? any BinaryInteger).map { Int64(clamping: $0) }
    }

    /// A string argument: a `String`, an object's `description` (`NSString`, `NSError`…), a C string pointer, or
    /// anything else's description.
    private static func string(_ argument: any CVarArg) -> String {
        switch argument {
        case let text as String: text
        case let object as NSObject: object.description
        case let pointer as UnsafePointer<CChar>: String(cString: pointer)
        case let pointer as UnsafeMutablePointer<CChar>: String(cString: pointer)
        default: String(describing: argument)
        }
    }

    /// A `%p` argument's address: a pointer's, an object's, or an integer taken as one.
    private static func address(_ argument: any CVarArg) -> UInt? {
        // Integers first: `as? NSObject` would bridge one to a new NSNumber.
        switch argument {
        case let number as any BinaryInteger: UInt(truncatingIfNeeded: number)
        case is String: nil
        case let object as NSObject: UInt(bitPattern: ObjectIdentifier(object))
        // Pointers' C encoding is their address (String's and NSObject's are not read: handled above).
        default: argument._cVarArgEncoding.first.map { UInt(bitPattern: $0) }
        }
    }
}
