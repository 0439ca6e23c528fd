/// A document that does not have the shape a type reads: which member, and what it must be.
///
/// One line whatever the document holds: it names the member's path and the kind it must have, never a value (a
/// value may be a message's content). Each edge wraps it in its own error (`ProtocolError`, `DeviceError`…).
public struct JSONFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the member.
    public enum Problem: Sendable, Equatable {
        /// The member is absent.
        case missing
        /// The member is there, but of another kind or value; `found` says what it is ("a string", "null"), or is
        /// nil when saying so would quote the value.
        case found(String?)
    }

    /// The member's keys from the top of the document, outermost first (`["remote_handle", "type"]`); empty for the
    /// document itself.
    public var path: [String]
    /// What the member must be: "a string", "an object", "a UUID", "alert, background or voip".
    public var expected: String
    public var problem: Problem

    public init(path: [String] = [], expected: String, problem: Problem) {
        self.path = path
        self.expected = expected
        self.problem = problem
    }

    /// The error for `json` (nil when the member is absent) not being `expected`: names its kind, never its value.
    public init(expected: String, butGot json: JSON?) {
        self.init(expected: expected, problem: json.map { .found($0.kindWithArticle) } ?? .missing)
    }

    /// The same error further down: inside the member at `keys` (outermost first).
    public func inside(_ keys: [String]) -> JSONFieldError {
        var error = self
        error.path.insert(contentsOf: keys, at: 0)
        return error
    }

    /// `"remote_handle.type" must be generic, phoneNumber or emailAddress, not a number`.
    public var description: String {
        let subject = path.isEmpty ? "the document" : "\"" + path.joined(separator: ".") + "\""
        switch problem {
        case .missing: return "\(subject) must be \(expected), and is missing"
        case .found(let found?): return "\(subject) must be \(expected), not \(found)"
        case .found(nil): return "\(subject) must be \(expected)"
        }
    }
}

extension JSON {
    /// The JSON type's name as a sentence uses it: "a string", "an object", "null".
    var kindWithArticle: String {
        switch self {
        case .null: "null"
        case .array, .object: "an \(typeName)"
        default: "a \(typeName)"
        }
    }
}
