/// A JSON value that keeps object keys in document order and integers apart from reals.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// The member `key` of an object, `nil` for anything else.
    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integer or a real with no fractional part.
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9e15: return Int64(value)
        default: return nil
        }
    }

    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The object, if this is one.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The array, if this is one.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The JSON type's name, for error messages ("string", "object", …).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}

extension JSON {
    /// `.string(value)`, or `.null` when `value` is nil.
    public static func string(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
    /// `.int(value)`, or `.null` when `value` is nil.
    public static func int(_ value: Int?) -> JSON { value.map { .int(Int64($0)) } ?? .null }
}

/// A JSON object: members in insertion order, looked up by key.
public struct JSONObject: Sendable, Sequence {
    /// The members, in order.
    public private(set) var members: [(key: String, value: JSON)]

    public init(_ members: [(key: String, value: JSON)] = []) { self.members = members }

    /// The member named `key`; setting `nil` removes it, setting a new key appends it.
    public subscript(key: String) -> JSON? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key: key, value: newValue))
            }
        }
    }

    /// Room for `count` members without growing (an object filled key by key grew 2, 4, 8, 16).
    public mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }
    /// The number of members.
    public var count: Int { members.count }
    /// Whether there are no members.
    public var isEmpty: Bool { members.isEmpty }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSON)]> { members.makeIterator() }
}

extension JSONObject: Equatable {
    /// Objects are equal when they hold the same keys with equal values, whatever the order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs.members where rhs[key] != value { return false }
        return true
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }
}
