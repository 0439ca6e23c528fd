/// A header value with parameters, as `Content-Type` and `Content-Disposition` have them (RFC 9110 §5.6.6):
/// `form-data; name="File"; filename="photo.jpg"`. Parameter names are lowercased; a value is a token or a quoted
/// string (its backslash escapes undone).
struct HeaderParameters: Equatable {
    /// The part before the first `;`, trimmed and lowercased (`multipart/form-data`, `form-data`).
    var value: String
    var parameters: [(name: String, value: String)]

    static func == (lhs: HeaderParameters, rhs: HeaderParameters) -> Bool {
        lhs.value == rhs.value && lhs.parameters.map(\.name) == rhs.parameters.map(\.name)
            && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }

    /// The first parameter named `name` (lowercase).
    subscript(name: String) -> String? { parameters.first { $0.name == name }?.value }

    init(_ text: String) {
        var scalars = Substring(text).unicodeScalars[...]
        value = String(String.UnicodeScalarView(scalars.prefix { $0 != ";" })).trimmingBlanks.lowercased()
        scalars = scalars.drop { $0 != ";" }
        parameters = []
        while scalars.first == ";" {
            scalars.removeFirst()
            let name = String(String.UnicodeScalarView(scalars.prefix { $0 != "=" && $0 != ";" })).trimmingBlanks
                .lowercased()
            scalars = scalars.drop { $0 != "=" && $0 != ";" }
            var parameterValue = ""
            if scalars.first == "=" {
                scalars.removeFirst()
                scalars = scalars.drop { $0 == " " || $0 == "\t" }
                if scalars.first == "\"" {
                    scalars.removeFirst()
                    while let scalar = scalars.popFirst(), scalar != "\"" {
                        if scalar == "\\", let escaped = scalars.popFirst() {
                            parameterValue.unicodeScalars.append(escaped)
                        } else {
                            parameterValue.unicodeScalars.append(scalar)
                        }
                    }
                    scalars = scalars.drop { $0 != ";" }
                } else {
                    parameterValue = String(String.UnicodeScalarView(scalars.prefix { $0 != ";" })).trimmingBlanks
                    scalars = scalars.drop { $0 != ";" }
                }
            }
            if !name.isEmpty { parameters.append((name, parameterValue)) }
        }
    }
}

extension String {
    /// Without the spaces and tabs at either end (a header's optional whitespace).
    var trimmingBlanks: String {
        let scalars = unicodeScalars.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }
        return String(String.UnicodeScalarView(scalars.reversed()))
    }
}
