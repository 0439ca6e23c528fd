/// A value with a JSON form: the result, the protocol's messages, the device file, the call report.
///
/// Written by hand, member by member, in the order the document shows them: the order and the null/absent rules
/// are part of each document (docs/result.md, docs/protocol.md), so they stay in sight in one literal per type.
public protocol JSONEncodable {
    /// The value as JSON.
    var json: JSON { get }
}

/// A value read from JSON, with ``JSONObject/field(_:)`` for each member, so that every reader names the member and
/// the kind it expects in the same words (``JSONFieldError``).
///
/// Not `Codable`: its coders find their types' metadata at run time (`swift_getTypeByMangledName`, already 17 % of
/// the extension's own CPU), while these readers are plain functions, specialized where they are called (the
/// helpers are `@inlinable`).
public protocol JSONDecodable {
    /// What the JSON must be, as an error says it: "a string", "an object", "alert, background or voip".
    static var jsonKind: String { get }
    /// What an absent member reads as; nil (the default) makes the member required.
    static var whenAbsent: Self? { get }
    /// Reads the value; an error names what is wrong below `json` (``JSONObject/field(_:)`` adds the key above).
    init(json: JSON) throws(JSONFieldError)
}

/// A value written to and read from JSON.
public typealias JSONConvertible = JSONDecodable & JSONEncodable

extension JSONDecodable {
    public static var whenAbsent: Self? { nil }
}

extension JSONObject {
    /// The member at `path` (a key, or the keys down through nested objects) read as `T`: the one field reader.
    /// An absent member is `T.whenAbsent` (nil for an optional `T`) or an error, and so is an absent or `null`
    /// object on the way; an error names the member's whole path.
    ///
    /// ```swift
    /// let uuid: String = try report.field("uuid")                       // required
    /// let type: HandleType = try report.field("remote_handle", "type")  // nested
    /// let name: String? = try report.field("localized_caller_name")     // absent or null: nil
    /// let video = try report.field("has_video") ?? false               // with a default
    /// ```
    @inlinable
    public func field<T: JSONDecodable>(_ path: String...) throws(JSONFieldError) -> T {
        precondition(!path.isEmpty, "a field is read at a path of at least one key")
        var object = self
        var depth = 0
        while depth < path.count - 1 {
            let value = object[path[depth]]
            if case .object(let next)? = value {
                object = next
                depth += 1
                continue
            }
            if value == nil || value == .null, let absent = T.whenAbsent { return absent }
            throw JSONFieldError(expected: JSONObject.jsonKind, butGot: value).inside(Array(path[...depth]))
        }
        guard let value = object[path[depth]] else {
            if let absent = T.whenAbsent { return absent }
            throw JSONFieldError(expected: T.jsonKind, butGot: nil).inside(path)
        }
        do { return try T(json: value) } catch { throw error.inside(path) }
    }
}

// MARK: - The JSON kinds

extension String: JSONConvertible {
    public static var jsonKind: String { "a string" }
    public var json: JSON { .string(self) }

    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard case .string(let value) = json else { throw JSONFieldError(expected: Self.jsonKind, butGot: json) }
        self = value
    }
}

extension Bool: JSONConvertible {
    public static var jsonKind: String { "a boolean" }
    public var json: JSON { .bool(self) }

    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard case .bool(let value) = json else { throw JSONFieldError(expected: Self.jsonKind, butGot: json) }
        self = value
    }
}

extension Int64: JSONConvertible {
    public static var jsonKind: String { "an integer" }
    public var json: JSON { .int(self) }

    /// An integer, or a real with no fractional part (``JSON/intValue``).
    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard let value = json.intValue else { throw JSONFieldError(expected: Self.jsonKind, butGot: json) }
        self = value
    }
}

extension Int: JSONConvertible {
    public static var jsonKind: String { "an integer" }
    public var json: JSON { .int(Int64(self)) }

    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard let value = json.intValue.flatMap(Int.init(exactly:)) else {
            throw JSONFieldError(expected: Self.jsonKind, butGot: json)
        }
        self = value
    }
}

extension Double: JSONConvertible {
    public static var jsonKind: String { "a number" }
    public var json: JSON { .double(self) }

    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard let value = json.doubleValue else { throw JSONFieldError(expected: Self.jsonKind, butGot: json) }
        self = value
    }
}

extension JSONObject: JSONConvertible {
    public static var jsonKind: String { "an object" }
    public var json: JSON { .object(self) }

    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard case .object(let value) = json else { throw JSONFieldError(expected: Self.jsonKind, butGot: json) }
        self = value
    }
}

/// An optional member: absent or `null` reads as nil, nil writes `null`.
extension Optional: JSONDecodable where Wrapped: JSONDecodable {
    public static var jsonKind: String { Wrapped.jsonKind }
    public static var whenAbsent: Self? { .some(nil) }

    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        self = json.isNull ? nil : try Wrapped(json: json)
    }
}

extension Optional: JSONEncodable where Wrapped: JSONEncodable {
    public var json: JSON { map(\.json) ?? .null }
}

// MARK: - Enumerations named by their raw value

extension JSONDecodable where Self: RawRepresentable & CaseIterable, RawValue == String {
    /// The names it may be: "generic, phoneNumber or emailAddress".
    public static var jsonKind: String {
        let names = allCases.map(\.rawValue)
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// One of the cases' names; an error names the kinds but not a string it does not know (it may be content).
    @inlinable
    public init(json: JSON) throws(JSONFieldError) {
        guard case .string(let name) = json else { throw JSONFieldError(expected: Self.jsonKind, butGot: json) }
        guard let value = Self(rawValue: name) else {
            throw JSONFieldError(expected: Self.jsonKind, problem: .found(nil))
        }
        self = value
    }
}

extension JSONEncodable where Self: RawRepresentable, RawValue == String {
    public var json: JSON { .string(rawValue) }
}
