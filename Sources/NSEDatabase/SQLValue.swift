/// A value bound to a statement's parameter or read from a result column.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }

    /// `.integer`, or `.null` for `nil`.
    public static func integer(_ value: Int64?) -> SQLValue { value.map(SQLValue.integer) ?? .null }
    /// `.text`, or `.null` for `nil`.
    public static func text(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    /// 0 or 1, as SQLite stores booleans.
    public static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
}

/// One result row: its columns in the order the query named them.
public struct SQLRow: Sendable {
    public var values: [SQLValue]

    public init(_ values: [SQLValue]) { self.values = values }

    public subscript(_ index: Int) -> SQLValue { index < values.count ? values[index] : .null }

    /// The column as an integer (`nil` for NULL or another type).
    public func integer(_ index: Int) -> Int64? {
        if case .integer(let value) = self[index] { return value }
        return nil
    }

    /// The column as text (`nil` for NULL or another type).
    public func text(_ index: Int) -> String? {
        if case .text(let value) = self[index] { return value }
        return nil
    }

    /// The column as bytes (a blob, or text's UTF-8; `nil` for NULL).
    public func blob(_ index: Int) -> [UInt8]? {
        switch self[index] {
        case .blob(let bytes): return bytes
        case .text(let text): return Array(text.utf8)
        default: return nil
        }
    }

    /// The column as a boolean (non-zero integer).
    public func bool(_ index: Int) -> Bool { (integer(index) ?? 0) != 0 }
}
