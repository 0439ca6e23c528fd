/// Why a document is not acceptable JSON, and where.
public struct JSONError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of problem.
    public enum Code: String, Sendable {
        case empty, syntax, duplicateKey, invalidUTF8, tooDeep, notAnObject
    }

    public var code: Code
    /// What is wrong, without the document's content beyond the offending key.
    public var message: String
    /// 1-based line of the problem (0 when unknown).
    public var line: Int
    /// 1-based column of the problem (0 when unknown).
    public var column: Int

    public init(code: Code, message: String, line: Int, column: Int) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String {
        line > 0 ? "\(message) at line \(line), column \(column)" : message
    }
}
