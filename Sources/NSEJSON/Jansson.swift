import CJansson

/// The bridge to jansson: the only Swift file that touches its C API.
/// - SeeAlso: https://jansson.readthedocs.io/en/latest/apiref.html#decoding
enum Jansson {
    /// Decodes a complete document into a ``JSON`` value, rejecting duplicate keys (jansson rejects invalid UTF-8
    /// itself). `\u0000` in a string is valid JSON (RFC 8259) and is kept: a message text may hold a NUL.
    static func decode(_ bytes: [UInt8]) throws(JSONError) -> JSON {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            throw JSONError(code: .empty, message: "the document is empty", line: 0, column: 0)
        }
        var error = json_error_t()
        let flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL
        let root: UnsafeMutablePointer<json_t>? = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                json_loadb($0, buffer.count, Int(flags), &error)
            }
        }
        guard let root else { throw translate(error) }
        defer { nse_json_decref(root) }
        return convert(root)
    }

    private static func translate(_ error: json_error_t) -> JSONError {
        var text = withUnsafePointer(to: error.text) {
            $0.withMemoryRebound(to: CChar.self, capacity: Int(JSON_ERROR_TEXT_LENGTH)) { String(cString: $0) }
        }
        // jansson ends many messages with "near '<token>'", quoting the document: drop it, since the document may be
        // a message's content and the line and column already say where. A duplicate key keeps its name (a key is
        // the document's structure, "aps"), cut short and with anything unprintable replaced.
        var token: String?
        if let near = text.firstRange(of: " near '") {
            token = String(text[near.upperBound...].dropLast(text.hasSuffix("'") ? 1 : 0))
            text = String(text[..<near.lowerBound])
        }
        if text.hasPrefix("near '") { text = "syntax error" }
        let code: JSONError.Code
        let message: String
        var copy = error
        switch json_error_code(&copy) {
        case json_error_duplicate_key:
            code = .duplicateKey
            let key = String(
                String.UnicodeScalarView(
                    (token ?? "").unicodeScalars.prefix(64).map {
                        $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "?" : $0
                    }))
            message = "duplicate key" + (key.isEmpty ? "" : " \(key)")
        case json_error_invalid_utf8:
            code = .invalidUTF8
            message = "invalid UTF-8: " + text
        default:
            code = .syntax
            message = text
        }
        return JSONError(code: code, message: message, line: Int(error.line), column: max(Int(error.column), 0))
    }

    private static func convert(_ value: UnsafeMutablePointer<json_t>) -> JSON {
        switch nse_json_typeof(value) {
        case Int32(JSON_OBJECT.rawValue):
            var members: [(key: String, value: JSON)] = []
            members.reserveCapacity(json_object_size(value))
            var iterator = json_object_iter(value)
            while let current = iterator {
                let key = String(cString: json_object_iter_key(current))
                members.append((key: key, value: convert(json_object_iter_value(current)!)))
                iterator = json_object_iter_next(value, current)
            }
            return .object(JSONObject(members))
        case Int32(JSON_ARRAY.rawValue):
            return .array((0..<json_array_size(value)).map { convert(json_array_get(value, $0)!) })
        case Int32(JSON_STRING.rawValue):
            let length = json_string_length(value)
            let pointer = UnsafeRawPointer(json_string_value(value)!)
            return .string(String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self))
        case Int32(JSON_INTEGER.rawValue):
            return .int(Int64(json_integer_value(value)))
        case Int32(JSON_REAL.rawValue):
            return .double(json_real_value(value))
        case Int32(JSON_TRUE.rawValue):
            return .bool(true)
        case Int32(JSON_FALSE.rawValue):
            return .bool(false)
        default:
            return .null
        }
    }
}
