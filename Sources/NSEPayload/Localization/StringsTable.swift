/// An app's localized strings (`Localizable.strings`), with Linphone's defaults.
public struct StringsTable: Sendable, Equatable {
    /// Key to localized format.
    public private(set) var entries: [String: String]

    public init(_ entries: [String: String] = [:]) { self.entries = entries }

    /// The keys nse itself uses, and their Linphone defaults.
    public enum Key {
        public static let message = "IM_MSG"
        public static let groupChat = "GC_MSG"
        public static let incomingCall = "IC_MSG"
        public static let voicemail = "MWI_NOTIFY_STR"
        public static let messageTitle = "Message received"
        public static let missedCall = "Missed call"
    }

    /// Linphone's strings, the defaults every device starts with.
    public static let linphoneDefaults = StringsTable([
        Key.message: "You have received a message",
        Key.groupChat: "You have been added to a chat room",
        Key.incomingCall: "Incoming call",
        Key.voicemail: "New voice message",
        Key.messageTitle: "Message received",
        Key.missedCall: "Missed call",
    ])

    /// The format for `key`; an unknown key renders as the key itself, as iOS does.
    public func format(for key: String) -> String { entries[key] ?? key }

    /// Whether the table has `key`.
    public func contains(_ key: String) -> Bool { entries[key] != nil }

    /// `other`'s entries win over this table's.
    public func merging(_ other: StringsTable) -> StringsTable {
        StringsTable(entries.merging(other.entries) { _, new in new })
    }

    /// Looks `key` up and substitutes `arguments` (`%@` in order, `%1$@` by position).
    public func localized(_ key: String, arguments: [String] = []) -> String {
        StringsTable.substitute(format(for: key), arguments)
    }

    /// Substitutes arguments into a Cocoa-style format: `%@` (also `%d`, `%i`, `%s`, `%u`) take the next argument,
    /// `%n$@` the n-th, `%%` is a percent sign. A missing argument renders as nothing.
    public static func substitute(_ format: String, _ arguments: [String]) -> String {
        var output = ""
        var next = 0
        var characters = format.makeIterator()
        let conversions: Set<Character> = ["@", "d", "i", "s", "u", "f", "x"]
        while let character = characters.next() {
            guard character == "%" else {
                output.append(character)
                continue
            }
            guard let first = characters.next() else {
                output.append("%")
                break
            }
            if first == "%" {
                output.append("%")
                continue
            }
            if conversions.contains(first) {
                if next < arguments.count { output += arguments[next] }
                next += 1
                continue
            }
            if first.isNumber {
                var digits = String(first)
                var terminator: Character?
                while let character = characters.next() {
                    if character.isNumber {
                        digits.append(character)
                    } else {
                        terminator = character
                        break
                    }
                }
                if terminator == "$", let conversion = characters.next(), conversions.contains(conversion),
                    let position = Int(digits), position >= 1
                {
                    if position <= arguments.count { output += arguments[position - 1] }
                    continue
                }
                output += "%" + digits + (terminator.map { String($0) } ?? "")
                continue
            }
            output.append("%")
            output.append(first)
        }
        return output
    }
}

/// A `.strings` file could not be read.
public struct StringsFileError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }
}

extension StringsTable {
    /// Parses the old-style property-list `.strings` format: `"KEY" = "value";`, with `/* */` and `//` comments
    /// and the escapes `\" \\ \n \t \r \Uxxxx`. Unquoted keys and values (letters, digits, `_.-`) are accepted too.
    public init(stringsFile text: String) throws(StringsFileError) {
        var entries: [String: String] = [:]
        var scanner = StringsScanner(Array(text.unicodeScalars))
        while true {
            try scanner.skipTrivia()
            if scanner.atEnd { break }
            let key = try scanner.token()
            try scanner.skipTrivia()
            try scanner.expect("=")
            try scanner.skipTrivia()
            let value = try scanner.token()
            try scanner.skipTrivia()
            try scanner.expect(";")
            entries[key] = value
        }
        self.init(entries)
    }
}

private struct StringsScanner {
    let scalars: [Unicode.Scalar]
    var index = 0
    var line = 1

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    var atEnd: Bool { index >= scalars.count }

    func fail(_ message: String) -> StringsFileError { StringsFileError(line: line, message: message) }

    mutating func advance() -> Unicode.Scalar {
        let scalar = scalars[index]
        index += 1
        if scalar == "\n" { line += 1 }
        return scalar
    }

    mutating func skipTrivia() throws(StringsFileError) {
        while !atEnd {
            let scalar = scalars[index]
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{FEFF}" {
                _ = advance()
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "/" {
                while !atEnd, scalars[index] != "\n" { _ = advance() }
            } else if scalar == "/", index + 1 < scalars.count, scalars[index + 1] == "*" {
                let start = line
                index += 2
                while true {
                    if atEnd { throw StringsFileError(line: start, message: "unterminated comment") }
                    if scalars[index] == "*", index + 1 < scalars.count, scalars[index + 1] == "/" {
                        index += 2
                        break
                    }
                    _ = advance()
                }
            } else {
                return
            }
        }
    }

    mutating func expect(_ character: Unicode.Scalar) throws(StringsFileError) {
        guard !atEnd, scalars[index] == character else { throw fail("expected \"\(character)\"") }
        index += 1
    }

    mutating func token() throws(StringsFileError) -> String {
        guard !atEnd else { throw fail("unexpected end of file") }
        if scalars[index] != "\"" {
            var text = String.UnicodeScalarView()
            while !atEnd,
                scalars[index].properties.isAlphabetic || ("0"..."9").contains(scalars[index])
                    || scalars[index] == "_" || scalars[index] == "." || scalars[index] == "-"
            {
                text.append(advance())
            }
            if text.isEmpty { throw fail("expected a quoted string") }
            return String(text)
        }
        _ = advance()
        var text = String.UnicodeScalarView()
        while true {
            guard !atEnd else { throw fail("unterminated string") }
            let scalar = advance()
            if scalar == "\"" { return String(text) }
            guard scalar == "\\" else {
                text.append(scalar)
                continue
            }
            guard !atEnd else { throw fail("unterminated string") }
            let escaped = advance()
            switch escaped {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "U", "u":
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard !atEnd,
                        let digit = scalars[index].properties.numericType != nil
                            ? UInt32(String(scalars[index])) : UInt32(String(scalars[index]), radix: 16)
                    else { throw fail("bad \\U escape") }
                    value = value * 16 + digit
                    index += 1
                }
                guard let decoded = Unicode.Scalar(value) else { throw fail("bad \\U escape") }
                text.append(decoded)
            default: text.append(escaped)
            }
        }
    }
}
