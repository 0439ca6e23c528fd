/// Options for strict parsing.
public struct JSONParseOptions: Sendable {
    /// Deepest nesting of arrays and objects accepted.
    public var maxDepth: Int
    /// Whether the top level must be an object.
    public var requireObject: Bool

    public init(maxDepth: Int = 32, requireObject: Bool = true) {
        self.maxDepth = maxDepth
        self.requireObject = requireObject
    }
}

extension JSON {
    /// Parses a document strictly: duplicate keys, invalid UTF-8 and over-deep nesting are errors that name the
    /// line and column.
    public static func parse(_ bytes: [UInt8], options: JSONParseOptions = JSONParseOptions()) throws(JSONError) -> JSON
    {
        try checkDepth(bytes, maxDepth: options.maxDepth)
        let value = try Jansson.decode(bytes)
        if options.requireObject, value.objectValue == nil {
            throw JSONError(
                code: .notAnObject, message: "the top level is a \(value.typeName), not an object", line: 1, column: 1)
        }
        return value
    }

    /// Parses a string (see ``parse(_:options:)``).
    public static func parse(_ text: String, options: JSONParseOptions = JSONParseOptions()) throws(JSONError) -> JSON {
        try parse(Array(text.utf8), options: options)
    }

    /// Rejects nesting deeper than `maxDepth` before the parser sees it, naming where it happens.
    static func checkDepth(_ bytes: [UInt8], maxDepth: Int) throws(JSONError) {
        var depth = 0
        var inString = false
        var escaped = false
        var line = 1
        var column = 0
        for byte in bytes {
            column += 1
            if byte == 0x0A {
                line += 1
                column = 0
            }
            if inString {
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x5B, 0x7B:
                depth += 1
                if depth > maxDepth {
                    throw JSONError(
                        code: .tooDeep, message: "nesting deeper than \(maxDepth) levels", line: line, column: column)
                }
            case 0x5D, 0x7D: depth -= 1
            default: break
            }
        }
    }
}
