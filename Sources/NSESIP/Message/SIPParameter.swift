/// A `name[=value]` parameter of a URI, header or challenge (name matching is case-insensitive).
public struct SIPParameter: Sendable, Hashable, CustomStringConvertible {
    /// The parameter name as written.
    public var name: String
    /// The value as written (quotes kept), or nil for a flag parameter.
    public var value: String?

    /// Creates a parameter; a nil value renders as a bare flag (`;rport`).
    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }

    /// The wire form without the leading separator, e.g. `tag=abc`.
    public var description: String {
        if let value { return "\(name)=\(value)" }
        return name
    }
}

extension Array where Element == SIPParameter {
    /// True when a parameter with this name (case-insensitive) is present.
    public func contains(parameter name: String) -> Bool {
        contains { SIPSyntax.equalsIgnoringCase($0.name, name) }
    }

    /// The value of the first parameter with this name, or nil if absent or valueless.
    public func value(of name: String) -> String? {
        first { SIPSyntax.equalsIgnoringCase($0.name, name) }?.value
    }

    /// Replaces the value of the parameter with this name, appending it if absent.
    public mutating func set(_ name: String, _ value: String?) {
        if let i = firstIndex(where: { SIPSyntax.equalsIgnoringCase($0.name, name) }) {
            self[i].value = value
        } else {
            append(SIPParameter(name, value))
        }
    }

    /// Removes every parameter with this name.
    public mutating func remove(parameter name: String) {
        removeAll { SIPSyntax.equalsIgnoringCase($0.name, name) }
    }

    /// Renders the list as `;a=b;c`.
    var wireForm: String {
        var s = ""
        s.reserveCapacity(wireSize)
        appendWireForm(to: &s)
        return s
    }

    /// The wire form's length in bytes.
    var wireSize: Int {
        reduce(0) { $0 + 2 + $1.name.utf8.count + ($1.value?.utf8.count ?? 0) }
    }

    /// Appends the wire form to `text`, piece by piece (a temporary string per parameter before): each parameter
    /// after `;`, or (a URI's headers) the first after `opening` and the others after `separator`.
    func appendWireForm(to text: inout String, opening: Character = ";", separator: Character = ";") {
        for (index, parameter) in enumerated() {
            text.append(index == 0 ? opening : separator)
            text.append(parameter.name)
            if let value = parameter.value {
                text.append("=")
                text.append(value)
            }
        }
    }
}
