import NSESystem

/// One HTTP header field: a name and its value.
public struct HTTPHeader: Sendable, Hashable {
    /// The field name (response headers are always lowercase).
    public var name: String
    /// The field value, without surrounding whitespace.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Ordered HTTP header fields; names may repeat and keep their order.
public struct HTTPHeaders: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    private var fields: [HTTPHeader]

    /// Creates an empty header list.
    public init() { fields = [] }

    /// Creates a header list from ordered name/value pairs.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { HTTPHeader(name: $0.0, value: $0.1) }
    }

    /// Creates a header list from a literal, keeping the literal's order and duplicates.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The position of the first field.
    public var startIndex: Int { fields.startIndex }
    /// The position past the last field.
    public var endIndex: Int { fields.endIndex }
    /// The field at `position`.
    public subscript(position: Int) -> HTTPHeader { fields[position] }

    /// Appends a field after all existing ones.
    public mutating func add(name: String, value: String) {
        fields.append(HTTPHeader(name: name, value: value))
    }

    /// Removes every field whose name matches `name` case-insensitively.
    public mutating func remove(name: String) {
        let key = ASCII.lowercased(name)
        fields.removeAll { ASCII.lowercased($0.name) == key }
    }

    /// The first value for `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        let key = ASCII.lowercased(name)
        return fields.first { ASCII.lowercased($0.name) == key }?.value
    }

    /// Every value for `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        let key = ASCII.lowercased(name)
        return fields.filter { ASCII.lowercased($0.name) == key }.map(\.value)
    }

    /// Whether any field is named `name` (case-insensitive).
    public func contains(name: String) -> Bool {
        self[name] != nil
    }

    mutating func appendToLastValue(_ continuation: String) {
        guard !fields.isEmpty else { return }
        let last = fields.count - 1
        fields[last].value = fields[last].value.isEmpty ? continuation : fields[last].value + " " + continuation
    }
}
