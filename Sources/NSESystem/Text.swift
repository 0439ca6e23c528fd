/// Text meant for one line of a log, an error or standard error.
public enum Text {
    /// `text` on one line: each run of control characters (C0, DEL, C1: line breaks, tabs, NUL) becomes one space,
    /// and trailing spaces go. A value quoted into a message can then never forge a second line.
    public static func oneLine(_ text: String) -> String {
        var line = String.UnicodeScalarView()
        var lastWasSpace = false
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                if !lastWasSpace { line.append(" ") }
                lastWasSpace = true
            } else {
                line.append(scalar)
                lastWasSpace = scalar == " "
            }
        }
        while line.last == " " { line.removeLast() }
        return String(line)
    }
}
