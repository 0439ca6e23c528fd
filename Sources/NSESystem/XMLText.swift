/// Escaping text for XML content and attribute values.
public enum XMLText {
    /// `&`, `<`, `>` and `"` as entities.
    public static func escape(_ text: String) -> String {
        // Scalar by scalar: `&` followed by a combining mark is one `Character`, different from "&".
        var output = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
